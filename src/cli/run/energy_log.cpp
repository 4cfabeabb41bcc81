#include "cli/run/energy_log.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "nbody/error.hpp"
#include "nbody/io.hpp"

namespace nbody::cli {

namespace {

constexpr const char* kHeader =
    "step,time,kinetic,potential,total,rel_energy_error,energy_lost,px,py,pz,Lx,Ly,Lz\n";

/// Keeps the header and the rows up to `step` (and at `step` when it is on the schedule),
/// rewriting the file atomically.
void drop_rows_after(const std::filesystem::path& path, std::uint64_t every, std::uint64_t step) {
  std::ifstream in(path);
  if (!in) return;  // no log yet (the first run logged nothing): start a new one
  std::string line;
  std::ostringstream kept;
  std::size_t line_number = 0;
  while (std::getline(in, line)) {
    ++line_number;
    if (line_number == 1) {
      if (line + "\n" != kHeader) {
        throw Error(
            fmt::format("{}:1: not an nbody energy log (header '{}'); move it away to restart here",
                        path.string(), line));
      }
      continue;
    }
    const std::uint64_t row_step = std::strtoull(line.c_str(), nullptr, 10);
    if (row_step > step || (row_step == step && step % every != 0)) break;
    kept << line << '\n';
  }
  write_file_atomically(path, [&](std::ostream& out) { out << kHeader << kept.str(); });
}

}  // namespace

EnergyLog::EnergyLog(const std::filesystem::path& path, std::uint64_t every, bool resume,
                     std::uint64_t resume_step)
    : path_(path) {
  const bool exists = std::filesystem::exists(path);
  if (resume && exists) drop_rows_after(path, every, resume_step);
  if (!resume || !exists) write_file_atomically(path, [](std::ostream& out) { out << kHeader; });
  errno = 0;
  file_ = std::fopen(path.c_str(), "a");
  if (file_ == nullptr) {
    throw Error(fmt::format("{}: cannot append to the energy log ({})", path.string(),
                            std::strerror(errno)));
  }
}

EnergyLog::~EnergyLog() {
  if (file_ != nullptr) std::fclose(file_);
}

void EnergyLog::append(std::uint64_t step, double time, const Diagnostics& d, double initial_energy,
                       double energy_lost) {
  // 17 significant digits: every double reads back exactly.
  fmt::print(file_,
             "{},{:.17g},{:.17g},{:.17g},{:.17g},{:.17g},{:.17g},{:.17g},{:.17g},{:.17g},{:.17g},{:"
             ".17g},{:.17g}\n",
             step, time, d.kinetic, d.potential, d.total_energy,
             relative_energy_drift(initial_energy, d.total_energy), energy_lost, d.momentum.x,
             d.momentum.y, d.momentum.z, d.angular_momentum.x, d.angular_momentum.y,
             d.angular_momentum.z);
  if (std::fflush(file_) != 0) {
    throw Error(
        fmt::format("{}: cannot write the energy log ({})", path_.string(), std::strerror(errno)));
  }
}

}  // namespace nbody::cli
