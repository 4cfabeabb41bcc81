#pragma once
// DIR/energy.csv: one row per --stats-every steps with the time, the energies, the
// relative energy error and the momenta, as GADGET's energy.txt. Rows are appended one
// write() at a time, so a run that dies keeps every row it logged, and a row that fails to
// write (disk full) is cut off again: the log never ends in a partial line.
#include <cstdint>
#include <filesystem>

#include "nbody/diagnostics.hpp"

namespace nbody::cli {

class EnergyLog {
 public:
  /// A new log with its header; or, resuming at step `resume_step`, the existing log with
  /// the rows after that step dropped (logged after the checkpoint, they will be logged
  /// again), and the row at that step too when it is off the `every` schedule (the closing
  /// row of a run that ended there), so the log of a restarted run equals an
  /// uninterrupted one.
  EnergyLog(const std::filesystem::path& path, std::uint64_t every, bool resume,
            std::uint64_t resume_step);
  ~EnergyLog();
  EnergyLog(const EnergyLog&) = delete;
  EnergyLog& operator=(const EnergyLog&) = delete;

  void append(std::uint64_t step, double time, const Diagnostics& d, double initial_energy,
              double energy_lost);
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  int fd_ = -1;
};

}  // namespace nbody::cli
