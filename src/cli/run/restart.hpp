#pragma once
// --restart: a checkpoint is the run. Which checkpoint to continue from; its options (the
// used-parameters TOML it stores) as the lowest layer under --config and the command line;
// the refusal of a change to the physics without --override; and the parameters a run
// records (used_parameters.toml and the next checkpoints).
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/cli11_fwd.hpp"
#include "cli/config_file.hpp"
#include "nbody/snapshot.hpp"

namespace nbody::cli {

struct RunArgs;

/// An option that changes the physics, given with --restart --override.
struct RestartChange {
  std::string option;  // "--softening"
  std::string before;  // the checkpoint's value, as shown: "0.01", "tree"
  std::string after;
};

/// What --restart found. Without a checkpoint (no --restart, or `latest` with none yet),
/// `file` is empty and the run starts from its source of bodies.
struct RestartPlan {
  std::optional<std::filesystem::path> file;
  // Its attributes (read_checkpoint_header: no bodies; the run's start reads them,
  // start_bodies in run_start.hpp).
  std::shared_ptr<CheckpointState> state;
  std::string parameters;  // the checkpoint's options (used-parameters TOML)
  std::uint64_t step = 0;  // where the checkpoint is
  double time = 0;
  double read_seconds = 0;
  std::vector<RestartChange> changes;  // physics changed with --override
  std::vector<std::string> ignored;    // options of the source of bodies given but not used
};

/// The options of a restart (call from run's callback, after --config): finds the checkpoint
/// --restart names and reads its attributes; refuses an option of the command line or config file
/// that changes the physics (the solver and its parameters, softening, G, dt, the integrator,
/// collisions) to another value than the checkpoint's, unless --override; then gives every
/// option that neither named the checkpoint's value, except those of this invocation only
/// (--quiet, --json, --timings, --threads) and of the source of bodies (-i, --model, -n and
/// the model parameters, --dim), which the checkpoint replaces. Throws nbody::Error.
[[nodiscard]] RestartPlan plan_restart(CLI::App& cmd, const RunArgs& args,
                                       const std::vector<ConfigSetting>& from_config);

/// What the run says of a restart's options: those of the source of bodies not used (to
/// `human` when `talk`), the physics changed with --override (to stderr on rank 0, `root`).
void print_restart_notes(const RestartPlan& plan, std::FILE* human, bool talk, bool root);

/// The TOML of the options a run uses (its used_parameters.toml and checkpoints), readable
/// by --config: the options in effect, where the model options are "not used" when the
/// bodies come from a file, and a restarted run keeps the checkpoint's source of bodies.
[[nodiscard]] std::string run_parameters(const CLI::App& cmd, const RunArgs& args,
                                         std::size_t bodies);

/// The checkpoint --restart names: a file, a folder's latest, or "latest" in the output
/// folder (nothing when there is none yet: the run starts fresh). Throws nbody::Error for a
/// missing file or a folder without checkpoints.
[[nodiscard]] std::optional<std::filesystem::path> restart_file(
    const std::string& restart, const std::filesystem::path& output_dir);

}  // namespace nbody::cli
