// start_bodies (run_start.hpp): a checkpoint or an HDF5 file read, or a model drawn, by each
// rank for its own share in a decomposed run, else every body on every rank.
#include "cli/run/run_start.hpp"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/options.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/input_error.hpp"
#include "nbody/integrator.hpp"
#include "nbody/io.hpp"
#include "nbody/snapshot.hpp"

namespace nbody::cli {

namespace {

/// --n-active and --test-particle-type onto the bodies (a checkpoint keeps its own
/// n_active: --n-active is a source option, and its type comes back as a run option).
void apply_test_particle_options(const RunArgs& a, const CLI::App& app, StartBodies& start) {
  ParticleSystem& ps = start.bodies;
  if (app.count("--test-particle-type") > 0) ps.test_particle_type = a.test_particle_type;
  const bool by_count = app.count("--test-particles") > 0;
  if (start.checkpoint || (app.count("--n-active") == 0 && !by_count)) return;
  const char* option = by_count ? "--test-particles" : "--n-active";
  const std::uint64_t given = by_count ? a.test_particles : a.n_active;
  if (start.shared) throw input_error(option, "test particles are not decomposed yet", given);
  if (given > ps.size()) {
    throw input_error(option, fmt::format("must be at most the number of bodies ({})", ps.size()),
                      given);
  }
  const std::size_t n_active = by_count ? ps.size() - given : given;
  for (std::size_t i = 0; i < n_active; ++i) {
    if (!(ps.mass[i] > 0)) {
      throw input_error(option,
                        fmt::format("active bodies need mass > 0, but body {} has mass {}", i,
                                    printable(ps.mass[i])),
                        given);
    }
  }
  ps.n_active = n_active;
}

}  // namespace

StartBodies start_bodies(const RunArgs& a, const CLI::App& app, const SimulationOptions& options,
                         const std::shared_ptr<ForceReducer>& ranks) {
  StartBodies start = start_bodies_as_given(a, app, options, ranks);
  apply_test_particle_options(a, app, start);
  return start;
}

StartBodies start_bodies_as_given(const RunArgs& a, const CLI::App& app,
                                  const SimulationOptions& options,
                                  const std::shared_ptr<ForceReducer>& ranks) {
  StartBodies start;
  if (a.restart.file) {
    // The checkpoint's dim decides (its options, applied by plan_restart, are the run's):
    // --dim is a source option the checkpoint replaces.
    if (Simulation::decomposes(options, a.restart.state->particles.dim, ranks.get())) {
      start.checkpoint = read_checkpoint_share(*a.restart.file, *ranks, start.total);
      start.shared = true;
    } else {
      start.checkpoint = read_checkpoint(*a.restart.file);
      start.total = start.checkpoint->particles.size();
    }
    start.bodies = std::move(start.checkpoint->particles);
    return start;
  }
  const bool decomposes = Simulation::decomposes(options, a.dim, ranks.get());
  const bool hdf5 = !a.input.empty() && (resolve_format(a.input, a.format) == FileFormat::Hdf5 ||
                                         looks_like_hdf5(a.input));
  if (decomposes && a.input.empty() && app.count("--model") > 0) {
    ModelOptions m = a.model;
    m.G = a.gravity.G;
    m.dim = a.dim;
    start.total = model_bodies(m);
    start.bodies = generate_share(m, *ranks);
    start.shared = true;
    return start;
  }
  if (decomposes && hdf5) {
    start.bodies = read_snapshot_share(a.input, *ranks, start.total);
    start.shared = true;
  } else {
    start.bodies = load_or_generate(a.input, a.format, a.model, a.gravity.G, a.dim, app, "run");
    start.total = start.bodies.size();
  }
  // --radius with a file gives every body that radius (generated models already have it).
  if (!a.input.empty() && app.count("--radius") > 0)
    for (double& r : start.bodies.radius) r = a.model.radius;
  return start;
}

void check_run_length(const RunArgs& a, const Simulation& sim, bool until_time, bool resumed,
                      std::uint64_t first_step, bool talk, std::FILE* human) {
  if (until_time && !(a.t_end > sim.time())) {
    if (resumed && a.t_end <= sim.time()) {
      if (talk)
        fmt::print(human, "nbody run: the checkpoint is already at t = {:.6g} >= --t-end {}\n",
                   sim.time(), a.t_end);
    } else {
      throw input_error("--t-end",
                        fmt::format("must be after the start time {}", printable(sim.time())),
                        a.t_end);
    }
  }
  if (!until_time && resumed && a.steps < first_step && talk) {
    fmt::print(human, "nbody run: the checkpoint is already at step {} >= --steps {}\n", first_step,
               a.steps);
  }
  // No run without an end: every step must advance the time up to the run's end and the
  // count stay within 2^53.
  check_time_step(a.dt);
  if (until_time && a.t_end > sim.time()) {
    check_run_until(a.integrator, sim.time(), a.t_end, a.dt);
  } else if (!until_time && a.steps > first_step) {
    check_run_steps(a.integrator, sim.time(), a.steps - first_step, a.dt);
  }
}

}  // namespace nbody::cli
