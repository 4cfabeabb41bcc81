#pragma once
// The nbody subcommands. Each add_*_command registers its options on the app and a
// callback that runs it; errors are thrown as nbody::Error and reported by main().
#include "cli/cli11_fwd.hpp"

namespace nbody::cli {

/// Thrown by a command that ends on purpose with a non-zero status after reporting why
/// itself (e.g. `run` stopped by SIGINT after writing a checkpoint: 128 + the signal).
struct CommandExit {
  int status;
};

void add_gen_command(CLI::App& app);
void add_run_command(CLI::App& app);
void add_info_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_accuracy_command(CLI::App& app);
void add_render_command(CLI::App& app);
void add_view_command(CLI::App& app);

}  // namespace nbody::cli
