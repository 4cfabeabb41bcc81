#pragma once
// What `nbody run` writes while it runs, besides the final -o FILE: snapshots, the energy
// log, checkpoints and the parameters used, all in one output directory (docs/snapshots.md).
#include <cstdint>
#include <string>
#include <vector>

#include "cli/cli11_fwd.hpp"

namespace nbody::cli {

struct OutputOptions {
  std::string output_dir;            // "" = the folder of -o FILE, else the current folder
  std::uint64_t snapshot_every = 0;  // steps between snapshots (0 = none)
  double snapshot_dt = 0;            // simulated time between snapshots (0 = none)
  std::string snapshot_precision = "double";
  std::vector<std::string> snapshot_fields;  // radius, acceleration, potential
  std::uint64_t stats_every = 0;             // steps between rows of energy.csv (0 = none)
  std::uint64_t checkpoint_every = 0;        // steps between checkpoints (0 = none)
  double checkpoint_every_minutes = 0;       // wall-clock minutes between checkpoints (0 = none)
  unsigned checkpoint_keep = 2;              // checkpoints kept (older ones are removed)
  std::string restart;                       // checkpoint file, directory, or "latest"
  bool override_physics = false;             // --override: a restart may change the physics
};

/// --output-dir, --snapshot-every, --snapshot-dt, --snapshot-precision, --snapshot-fields,
/// --stats-every, --checkpoint-every, --checkpoint-every-minutes, --checkpoint-keep, --restart,
/// --override.
void add_output_options(CLI::App* app, OutputOptions& options);

}  // namespace nbody::cli
