#pragma once
// What `nbody run` writes while it runs, from Python: sim.evolve(t, output_dir=...,
// snapshot_dt=..., snapshot_every=..., stats_every=..., checkpoint_every=...) writes the
// snapshot series (snapshot_NNNN.hdf5), the energy log (energy.csv) and checkpoints
// (checkpoint_<step>.h5) with the command line's own code (src/cli/run/run_files.cpp and
// energy_log.cpp, compiled into the module), so the files are the same as `nbody run`'s.
// The series live as long as the simulation asks for the same outputs: successive
// evolve() calls continue the numbering and the log; a simulation from load_checkpoint()
// continues the series its checkpoint recorded.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>

#include "cli/run/energy_log.hpp"
#include "cli/run/run_files.hpp"
#include "nbody/snapshot_parameters.hpp"
#include "python/py_simulation.hpp"

namespace nbody::python {

struct OutputRequest {
  std::filesystem::path dir = ".";
  double snapshot_dt = 0;            // simulated time between snapshots (evolve lands on them)
  std::uint64_t snapshot_every = 0;  // steps between snapshots
  std::uint64_t stats_every = 0;     // steps between rows of energy.csv
  std::uint64_t checkpoint_every = 0;
  unsigned checkpoint_keep = 2;
  [[nodiscard]] bool any() const {
    return snapshot_dt > 0 || snapshot_every > 0 || stats_every > 0 || checkpoint_every > 0;
  }
  bool operator==(const OutputRequest&) const = default;
};

/// Throws nbody::Error (Python names) for a bad cadence.
void validate(const OutputRequest& request);

class RunOutputs {
 public:
  /// Creates the folder; writes snapshot 0 and the first row of the log at the current
  /// state, unless the simulation came from a checkpoint (then the series go on).
  RunOutputs(PySimulation& sim, const OutputRequest& request);
  [[nodiscard]] const OutputRequest& request() const { return request_; }
  /// After each step: the snapshot, log row and checkpoint that are due.
  void after_step();
  /// Where evolve() stops next on its way to t_end: the next snapshot time (snapshot_dt),
  /// else t_end.
  [[nodiscard]] double next_stop(double t_end) const;
  /// The state for a checkpoint, with the series' counters.
  [[nodiscard]] CheckpointState checkpoint_state() const;
  /// Takes the run options' text for the checkpoints (with the GIL held: after_step runs
  /// without it, and the options are Python objects on the way to text).
  void take_options();

 private:
  PySimulation& sim_;
  OutputRequest request_;
  cli::SnapshotSeries snapshots_;
  cli::CheckpointSeries checkpoints_;
  std::optional<cli::EnergyLog> log_;
  std::string options_toml_;
  std::vector<SnapshotParameter> parameters_;  // /Parameters of each snapshot
  void write_snapshot();
};

/// The checkpoint of sim with options_toml (parameters_toml()) and, when outputs is not
/// null, the outputs' cadence (for the record).
[[nodiscard]] CheckpointState checkpoint_state(PySimulation& sim, const std::string& options_toml,
                                               const RunOutputs* outputs);

}  // namespace nbody::python
