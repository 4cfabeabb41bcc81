#include "cli/run/run_files.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include "nbody/error.hpp"
#include "nbody/input_error.hpp"

namespace nbody::cli {

namespace fs = std::filesystem;

namespace {

/// The step in a name "checkpoint_<step>.<ext>", or nothing for other names.
std::optional<std::uint64_t> checkpoint_step(const fs::path& file) {
  const std::string stem = file.stem().string();
  const std::string prefix = "checkpoint_";
  if (stem.rfind(prefix, 0) != 0 || stem.size() == prefix.size() || file.extension().empty())
    return std::nullopt;
  const std::string digits = stem.substr(prefix.size());
  if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  return std::stoull(digits);
}

/// Checkpoints in dir, oldest first.
std::vector<std::pair<std::uint64_t, fs::path>> checkpoints_in(const fs::path& dir) {
  std::vector<std::pair<std::uint64_t, fs::path>> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (!entry.is_regular_file(ec)) continue;
    if (auto step = checkpoint_step(entry.path())) found.emplace_back(*step, entry.path());
  }
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace

SnapshotSeries::SnapshotSeries(fs::path dir, const OutputOptions& o, double start_time)
    : dir_(std::move(dir)),
      every_(o.snapshot_every),
      dt_(o.snapshot_dt),
      origin_(start_time),
      next_time_(start_time) {
  options_.precision =
      o.snapshot_precision == "float" ? SnapshotPrecision::Float : SnapshotPrecision::Double;
  for (const auto& field : o.snapshot_fields) {
    if (field == "radius") options_.radius = true;
    if (field == "acceleration") options_.acceleration = true;
    if (field == "potential") potential_ = true;
  }
}

void SnapshotSeries::resume(std::uint64_t next_index, double next_time, double origin) {
  next_index_ = next_index;
  next_time_ = next_time;
  // The times go on as origin + k T; a checkpoint without the origin (older ones) counts
  // from its next time.
  origin_ = std::isfinite(origin) ? origin : next_time;
  periods_ = dt_ > 0 ? std::round((next_time - origin_) / dt_) : 0.0;
}

bool SnapshotSeries::due(std::uint64_t step, double time) const {
  if (every_ > 0) return step % every_ == 0;
  // A step that lands a hair before the output time (rounding of t + dt + dt ...) counts.
  if (dt_ > 0) return time >= next_time_ - 1e-9 * dt_;
  return false;
}

fs::path SnapshotSeries::write(const ParticleSystem& ps, const std::vector<double>* potential,
                               ForceReducer* share) {
  const fs::path path = dir_ / fmt::format("snapshot_{:04d}.hdf5", next_index_);
  SnapshotOptions options = options_;
  options.ids_usable = &ids_usable_;  // a run's ids do not change: checked once
  if (share) {
    write_snapshot_share(path, ps, options, potential, *share);
  } else {
    write_snapshot(path, ps, options, potential);
  }
  skip(ps.time);
  return path;
}

void SnapshotSeries::skip(double time) {
  ++next_index_;
  if (dt_ > 0) {
    // One snapshot however many output times this step passed (dt larger than T).
    // origin + k T, not a running sum: the times stay the multiples (IAS15 lands on them).
    while (next_time_ <= time + 1e-9 * dt_) next_time_ = origin_ + ++periods_ * dt_;
  }
}

CheckpointSeries::CheckpointSeries(fs::path dir, const OutputOptions& o)
    : dir_(std::move(dir)),
      every_(o.checkpoint_every),
      minutes_(o.checkpoint_every_minutes),
      keep_(o.checkpoint_keep),
      last_(std::chrono::steady_clock::now()) {}

bool CheckpointSeries::due(std::uint64_t step) const {
  if (every_ > 0 && step % every_ == 0) return true;
  if (minutes_ > 0) {
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - last_).count();
    return elapsed >= 60.0 * minutes_;
  }
  return false;
}

fs::path CheckpointSeries::write(const CheckpointState& state, const ParticleSystem& particles,
                                 ForceReducer* share) {
  const fs::path path = dir_ / fmt::format("checkpoint_{:08d}.h5", state.step);
  const bool root = !share || share->part() == 0;
  std::string problem;  // rank 0's, which every rank throws in a decomposed run
  if (root) {
    try {
      create_dir(dir_);
    } catch (const Error& e) {
      if (!share) throw;
      problem = e.what();
    }
  }
  if (share) {
    for (const auto& said : share->all_gather(ForceReducer::Bytes(problem.begin(), problem.end())))
      if (!said.empty()) throw Error(std::string(said.begin(), said.end()));
    write_checkpoint_share(path, state, particles, *share, &ids_usable_);
  } else {
    write_checkpoint(path, state, particles, &ids_usable_);
  }
  last_ = std::chrono::steady_clock::now();
  if (!root) return path;
  auto all = checkpoints_in(dir_);
  if (all.size() > keep_) {
    std::error_code ignored;
    for (std::size_t i = 0; i + keep_ < all.size(); ++i) {
      if (all[i].second != path) fs::remove(all[i].second, ignored);
    }
  }
  return path;
}

fs::path CheckpointSeries::skip(std::uint64_t step) {
  last_ = std::chrono::steady_clock::now();
  return dir_ / fmt::format("checkpoint_{:08d}.h5", step);
}

fs::path output_dir_of(const std::string& output_dir, const std::string& output) {
  if (!output_dir.empty()) return output_dir;
  if (!output.empty() && fs::path(output).has_parent_path()) return fs::path(output).parent_path();
  return ".";
}

std::optional<fs::path> latest_checkpoint(const fs::path& dir) {
  auto all = checkpoints_in(dir);
  if (all.empty()) return std::nullopt;
  return all.back().second;
}

/// out.txt, step 100 -> out_000100.txt (numbered outputs of --every beside the final one).
fs::path numbered_path(const fs::path& path, std::uint64_t step) {
  auto numbered = path;
  numbered.replace_filename(
      fmt::format("{}_{:06d}{}", path.stem().string(), step, path.extension().string()));
  return numbered;
}

/// Creates `dir` (and its parents) when missing; the message names the option that asked.
void create_dir(const fs::path& dir, std::string_view option) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) {
    throw input_error(option,
                      fmt::format("cannot create the folder ({})",
                                  ec ? ec.message() : "a file of that name exists"),
                      dir.string());
  }
}

}  // namespace nbody::cli
