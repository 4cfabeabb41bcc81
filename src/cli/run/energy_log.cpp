#include "cli/run/energy_log.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <system_error>

#include <fmt/format.h>

#include "nbody/error.hpp"
#include "nbody/input_error.hpp"
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
                        path.string(), printable(line)));
      }
      continue;
    }
    // A last row without its '\n' was cut short (a log of an older nbody that was killed
    // mid-row, or whose disk filled up): never keep it.
    if (in.eof()) break;
    const std::uint64_t row_step = std::strtoull(line.c_str(), nullptr, 10);
    if (row_step > step || (row_step == step && step % every != 0)) break;
    kept << line << '\n';
  }
  if (line_number == 0) return;  // an empty file: written anew with its header
  write_file_atomically(path, [&](std::ostream& out) { out << kHeader << kept.str(); });
}

/// Writes all of data; false with errno set when a write() fails.
bool write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t written = ::write(fd, data, size);
    if (written < 0 && errno == EINTR) continue;  // a signal that only raised a flag
    if (written <= 0) {
      if (written == 0) errno = EIO;
      return false;
    }
    data += written;
    size -= static_cast<std::size_t>(written);
  }
  return true;
}

}  // namespace

EnergyLog::EnergyLog(const std::filesystem::path& path, std::uint64_t every, bool resume,
                     std::uint64_t resume_step)
    : path_(path) {
  const bool exists = std::filesystem::exists(path);
  if (resume && exists) drop_rows_after(path, every, resume_step);
  std::error_code ec;
  if (!resume || !exists || std::filesystem::file_size(path, ec) == 0) {
    write_file_atomically(path, [](std::ostream& out) { out << kHeader; });
  }
  fd_ = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd_ < 0) {
    throw Error(fmt::format("{}: cannot append to the energy log ({})", path.string(),
                            std::strerror(errno)));
  }
}

EnergyLog::~EnergyLog() {
  if (fd_ >= 0) ::close(fd_);
}

void EnergyLog::append(std::uint64_t step, double time, const Diagnostics& d, double initial_energy,
                       double energy_lost) {
  // 17 significant digits: every double reads back exactly.
  fmt::memory_buffer row;
  fmt::format_to(std::back_inserter(row),
                 "{},{:.17g},{:.17g},{:.17g},{:.17g},{:.17g},{:.17g},{:.17g},{:.17g},{:.17g},{:."
                 "17g},{:.17g},{:.17g}\n",
                 step, time, d.kinetic, d.potential, d.total_energy,
                 relative_energy_drift(initial_energy, d.total_energy), energy_lost, d.momentum.x,
                 d.momentum.y, d.momentum.z, d.angular_momentum.x, d.angular_momentum.y,
                 d.angular_momentum.z);
  // Why not a temporary and a rename, as for every other file: the log grows a row at a
  // time, and rewriting it whole for each row would cost time quadratic in its length.
  // Instead each row goes out in one write() of the whole line (no stdio buffer that could
  // split it), and a row the disk takes only in part (full, or over a size limit) is cut
  // off again: ftruncate back to the size before it needs no space, so the file under its
  // final name ends with the last complete row.
  struct stat before {};
  if (::fstat(fd_, &before) != 0) {
    throw Error(
        fmt::format("{}: cannot write the energy log ({})", path_.string(), std::strerror(errno)));
  }
  if (write_all(fd_, row.data(), row.size())) return;
  const int reason = errno;
  std::string message =
      fmt::format("{}: cannot write the energy log ({})", path_.string(), std::strerror(reason));
  if (::ftruncate(fd_, before.st_size) != 0) {
    message += fmt::format("; its last row may be incomplete ({})", std::strerror(errno));
  }
  throw Error(message);
}

}  // namespace nbody::cli
