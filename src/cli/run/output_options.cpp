#include <CLI/CLI.hpp>

#include "cli/option_checks.hpp"
#include "cli/run/output_options.hpp"

namespace nbody::cli {

void add_output_options(CLI::App* app, OutputOptions& o) {
  app->add_option(
      "--output-dir", o.output_dir,
      "Folder for snapshots, checkpoints, energy.csv and used_parameters.toml (created if "
      "missing; default: the folder of -o FILE, else the current folder)");
  auto* every = app->add_option(
      "--snapshot-every", o.snapshot_every,
      "Write DIR/snapshot_NNNN.hdf5 (GADGET/SWIFT layout) at the start and every K steps");
  auto* dt =
      app->add_option(
             "--snapshot-dt", o.snapshot_dt,
             "Write a snapshot at the start and at the first step at or after every multiple of T "
             "of simulated time")
          ->check(positive_number());
  every->excludes(dt);
  app->add_option("--snapshot-precision", o.snapshot_precision,
                  "Snapshot arithmetic: float (float32) or double")
      ->check(one_of({"float", "double"}))
      ->capture_default_str();
  app->add_option("--snapshot-fields", o.snapshot_fields,
                  "Extra snapshot datasets: radius, acceleration, potential (O(N^2) on the CPU)")
      ->check(one_of({"radius", "acceleration", "potential"}))
      ->delimiter(',');
  app->add_option("--stats-every", o.stats_every,
                  "Append time, energies, |dE/E|, momentum and angular momentum to DIR/energy.csv "
                  "every K steps");
  app->add_option("--checkpoint-every", o.checkpoint_every,
                  "Write DIR/checkpoint_<step>.h5 every K steps");
  app->add_option("--checkpoint-every-minutes", o.checkpoint_every_minutes,
                  "Write a checkpoint every M minutes of wall-clock time")
      ->check(positive_number());
  app->add_option("--checkpoint-keep", o.checkpoint_keep,
                  "How many checkpoints to keep (older ones are removed)")
      ->check(whole_in(1, 1000000))
      ->capture_default_str();
  app->add_option(
      "--restart", o.restart,
      "Continue from a checkpoint: a file, a folder (its latest checkpoint_*), or 'latest' (the "
      "latest in the output folder; a fresh start when there is none). --steps and --t-end are "
      "then absolute: the same command finishes the job however often it was interrupted. The "
      "run goes on with the checkpoint's options; options given change only what they name "
      "(docs/restart.md)");
  app->add_flag("--override", o.override_physics,
                "With --restart: allow options that change the physics (--dt, --softening, the "
                "solver, the integrator, collisions) to differ from the checkpoint's");
}

}  // namespace nbody::cli
