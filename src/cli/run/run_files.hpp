#pragma once
// The numbered files of a run in its output directory: snapshots (snapshot_NNNN.hdf5, on a
// schedule of steps or of simulated time) and checkpoints (checkpoint_<step>.h5, every K
// steps, every M minutes, and on demand; only the newest few are kept).
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/run/output_options.hpp"
#include "nbody/distributed.hpp"
#include "nbody/particles.hpp"
#include "nbody/snapshot.hpp"

namespace nbody::cli {

class SnapshotSeries {
 public:
  /// Snapshots from simulated time start_time (the first one is written at the start).
  SnapshotSeries(std::filesystem::path dir, const OutputOptions& options, double start_time);
  [[nodiscard]] bool enabled() const { return every_ > 0 || dt_ > 0; }
  [[nodiscard]] bool wants_potential() const { return potential_; }
  /// Continues the numbering and the time schedule (origin + k T) a checkpoint recorded;
  /// a NaN origin (an older checkpoint) counts the times from next_time.
  void resume(std::uint64_t next_index, double next_time, double origin);
  /// The time of snapshot 0, from which the --snapshot-dt times count.
  [[nodiscard]] double origin() const { return origin_; }
  /// Whether the state after `step` at simulated time `time` gets a snapshot.
  [[nodiscard]] bool due(std::uint64_t step, double time) const;
  /// Writes the next snapshot_NNNN.hdf5 (potential: per-body potentials, or null) and
  /// moves the schedule on. Returns its path. With `share` (a decomposed run) ps is this
  /// rank's bodies, and every rank calls it: they write the one file together.
  std::filesystem::path write(const ParticleSystem& ps, const std::vector<double>* potential,
                              ForceReducer* share = nullptr);
  /// Moves the schedule on as write() does, without writing (MPI ranks other than 0).
  void skip(double time);
  [[nodiscard]] std::uint64_t next_index() const { return next_index_; }
  [[nodiscard]] double next_time() const { return next_time_; }

 private:
  std::filesystem::path dir_;
  std::uint64_t every_;
  double dt_;
  SnapshotOptions options_;
  std::optional<bool> ids_usable_;  // SnapshotOptions::ids_usable: checked once a run
  bool potential_ = false;
  std::uint64_t next_index_ = 0;
  double origin_;
  double periods_ = 0;  // k of the next time origin + k T
  double next_time_;
};

class CheckpointSeries {
 public:
  CheckpointSeries(std::filesystem::path dir, const OutputOptions& options);
  /// Whether a checkpoint is due after `step` (every K steps, or M minutes since the last).
  [[nodiscard]] bool due(std::uint64_t step) const;
  /// Writes DIR/checkpoint_<step>.h5 atomically (creating DIR again if it went), then
  /// removes all but the newest `keep`: the state with the bodies `particles` (not copied).
  /// With `share` (a decomposed run) they are this rank's bodies, and every rank calls it:
  /// they write the one file together.
  std::filesystem::path write(const CheckpointState& state, const ParticleSystem& particles,
                              ForceReducer* share = nullptr);
  /// The path write() would use at `step`, without writing (MPI ranks other than 0).
  std::filesystem::path skip(std::uint64_t step);

 private:
  std::filesystem::path dir_;
  std::uint64_t every_;
  double minutes_;
  unsigned keep_;
  std::chrono::steady_clock::time_point last_;
  std::optional<bool> ids_usable_;  // SnapshotOptions::ids_usable: checked once a run
};

/// The folder of a run's numbered files: --output-dir, else the folder of -o FILE, else ".".
[[nodiscard]] std::filesystem::path output_dir_of(const std::string& output_dir,
                                                  const std::string& output);

/// The checkpoint with the highest step in dir (files checkpoint_<step>.<ext>), if any.
[[nodiscard]] std::optional<std::filesystem::path> latest_checkpoint(
    const std::filesystem::path& dir);

/// out.txt, step 100 -> out_000100.txt (numbered outputs of --every beside the final one).
[[nodiscard]] std::filesystem::path numbered_path(const std::filesystem::path& path,
                                                  std::uint64_t step);
/// Creates `dir` (and its parents) when missing; the message names the option that asked.
void create_dir(const std::filesystem::path& dir, std::string_view option = "--output-dir");

}  // namespace nbody::cli
