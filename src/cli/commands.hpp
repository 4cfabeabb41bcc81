#pragma once
// The nbody subcommands. Each add_*_command registers its options on the app and a
// callback that runs it; errors are thrown as nbody::Error and reported by main().
#include <CLI/CLI.hpp>

namespace nbody::cli {

void add_gen_command(CLI::App& app);
void add_run_command(CLI::App& app);
void add_info_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_accuracy_command(CLI::App& app);
void add_render_command(CLI::App& app);
void add_view_command(CLI::App& app);

}  // namespace nbody::cli
