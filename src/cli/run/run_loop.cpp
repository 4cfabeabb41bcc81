// nbody run: load, generate or restart the bodies, step them, and write what was asked
// for on the way (snapshots, energy log, checkpoints), stopping cleanly on SIGINT/SIGTERM.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/config_file.hpp"
#include "cli/options.hpp"
#include "cli/progress.hpp"
#include "cli/run/energy_advice.hpp"
#include "cli/run/energy_log.hpp"
#include "cli/run/interrupt.hpp"
#include "cli/run/restart.hpp"
#include "cli/run/run_args.hpp"
#include "cli/run/run_files.hpp"
#include "cli/run/run_report.hpp"
#include "cli/run/run_start.hpp"
#include "cli/usage_error.hpp"
#include "core/omp_team.hpp"
#include "io/io_trace.hpp"
#include "nbody/distributed.hpp"
#include "nbody/error.hpp"
#include "nbody/input_error.hpp"
#include "nbody/integrator.hpp"
#include "nbody/io.hpp"
#include "nbody/simulation.hpp"
#include "nbody/snapshot.hpp"
#include "parallel/domain_gravity.hpp"

namespace nbody::cli {

namespace fs = std::filesystem;

int run_simulation(RunArgs& a, const CLI::App& app) {
  // Several MPI ranks: rank 0 alone talks and writes files (docs/distributed.md).
  const std::shared_ptr<ForceReducer> ranks = world();
  const bool root = !ranks || ranks->part() == 0;
  auto all_ranks_max = [&](int v) { return ranks && ranks->parts() > 1 ? ranks->max(v) : v; };
  if (!root) a.json = false;
  // Human-readable output goes to stderr when stdout carries the JSON object.
  std::FILE* human = a.json ? stderr : stdout;
  const bool talk = !a.quiet && root;
  const bool until_time = app.count("--t-end") > 0;
  if (app.count("--steps") == 0 && !until_time)
    throw UsageError("nbody run needs a length: --steps K or --t-end T");
  check_collision_options(app, a.collisions);
  (void)io_detail::io_trace_on();  // NBODY_IO_TRACE checked here, on every rank alike
  const OutputOptions& out = a.outputs;
  if (!out.snapshot_fields.empty() && out.snapshot_every == 0 && out.snapshot_dt == 0) {
    throw Error(
        "--snapshot-fields: no snapshots are written (add --snapshot-every K or --snapshot-dt T)");
  }
  const fs::path dir = output_dir_of(out.output_dir, a.output);
  // The checkpoint was found and read, and its options applied, before (plan_restart).
  const std::optional<fs::path>& restart = a.restart.file;
  if (!out.restart.empty() && out.restart == "latest" && !restart && talk) {
    fmt::print(
        human,
        "nbody run: --restart latest: no checkpoint in {} yet, starting from the beginning\n",
        dir.string());
  }

  // ---- the bodies: from a checkpoint, a file or a model (run_start.hpp) --------------
  SimulationOptions sim_options{a.gravity, a.integrator, a.collisions, a.energy};
  sim_options.test_particles =  // not decomposed
      app.count("--n-active") > 0 || app.count("--test-particles") > 0;
  PhaseTimes io_times;
  StartBodies start;
  std::optional<CheckpointState> resumed;
  {
    ScopedPhase phase(io_times, "io");
    start = start_bodies(a, app, sim_options, ranks);
    resumed = std::move(start.checkpoint);
    if (restart) print_restart_notes(a.restart, human, talk, root);
  }
  if (a.dim == 2 && !resumed) {
    double moved[2] = {double(start.bodies.make_planar()), double(start.bodies.size())};
    if (start.shared) ranks->sum(moved, 2);  // every rank's share (collective)
    if (moved[0] > 0 && talk) {
      fmt::print(stderr, "nbody: --dim 2: set z = vz = 0 for {} of {} bodies\n", moved[0],
                 moved[1]);
    }
  }
  const int dim = start.bodies.dim;
  std::string parameters = run_parameters(app, a, start.total);
  Simulation sim = start.shared ? Simulation::from_share(std::move(start.bodies), start.total,
                                                         sim_options, ranks)
                                : Simulation(std::move(start.bodies), sim_options, ranks);
  if (resumed) {
    sim.resume(resumed->step, resumed->collisions, resumed->integrator);
    sim.resume_decomposition(resumed->decomposition);
  }
  if (talk && !a.output.empty())
    fmt::print(stderr, "{}",
               slow_output_notice(a.output, resolve_format(a.output, a.format), sim.size()));
  const std::uint64_t first_step = sim.steps_done();
  const bool collide = a.collisions.model != CollisionModel::None;
  // The state is read through sim.particles() only when it is written out: with
  // --device gpu that is the only time the bodies leave the GPU.

  // ---- how far: --steps and --t-end are absolute (the step count and time of the run) ---
  check_run_length(a, sim, until_time, resumed.has_value(), first_step, talk, human);
  // --t-end: the last step is shortened to land on T exactly. Decided from the state
  // alone, so a restarted run takes the same steps as an uninterrupted one.
  // IAS15 chooses its own steps (--dt is the first one's guess) and lands exactly on
  // --t-end and on the times of --snapshot-dt: how many steps that takes is not known ahead.
  const bool own_steps = sim.own_steps();
  auto more_steps = [&] {
    if (own_steps) return until_time ? sim.time() < a.t_end : sim.steps_done() < a.steps;
    return until_time ? step_toward(sim.time(), a.t_end, a.dt) > 0 : sim.steps_done() < a.steps;
  };
  auto next_dt = [&] { return until_time ? step_toward(sim.time(), a.t_end, a.dt) : a.dt; };
  const std::uint64_t last_step =
      until_time
          ? (own_steps
                 ? 0
                 : first_step + (more_steps() ? steps_to_reach(sim.time(), a.t_end, a.dt) : 0))
          : std::max(a.steps, first_step);
  // The energy method of the whole run (auto chosen by the plan's cost, energy_advice.hpp):
  // every energy below (start, end, --every, --stats-every, the progress line) uses it.
  const EnergyChoice energy_choice =
      choose_run_energy(a, sim, last_step, resumed ? &resumed->parameters : nullptr);
  if (a.energy == EnergyMethod::Auto)
    parameters = with_chosen_energy(parameters, energy_choice.method);
  const EnergyMethod energy = energy_choice.method;
  const bool has_energy = energy != EnergyMethod::Off;

  // ---- outputs ---------------------------------------------------------------------
  const bool checkpointing = out.checkpoint_every > 0 || out.checkpoint_every_minutes > 0;
  SnapshotSeries snapshots(dir, out, sim.time());
  CheckpointSeries checkpoints(dir, out);
  const bool writes_dir = !out.output_dir.empty() || snapshots.enabled() || checkpointing ||
                          out.stats_every > 0 || !out.restart.empty();
  if (writes_dir && root) create_dir(dir);
  if (!a.output.empty() && fs::path(a.output).has_parent_path() && root)
    create_dir(fs::path(a.output).parent_path(), "-o");
  // Only into a run's own folder: a bare -o FILE leaves no file beside it.
  if (writes_dir && root) {
    write_file_atomically(dir / "used_parameters.toml",
                          [&](std::ostream& os) { os << parameters; });
  }
  if (resumed)
    snapshots.resume(resumed->next_snapshot, resumed->next_snapshot_time, resumed->snapshot_origin);
  std::unique_ptr<EnergyLog> energy_log;
  if (out.stats_every > 0 && root)
    energy_log = std::make_unique<EnergyLog>(dir / "energy.csv", out.stats_every,
                                             resumed.has_value(), first_step);

  if (talk) {
    const std::string stepping = stepping_text(a, sim, until_time, last_step - first_step);
    // Under mpirun, a run that replicates the state says why (docs/distributed.md Part 1).
    const std::string why = sim.decomposed() ? "" : parallel::replicated_because(sim.options());
    const std::string threads =
        sim.on_device() ? ""
        : sim.run_threads() == 1
            ? a.gravity.threads == 1 ? " on 1 thread" : " on 1 thread (too few bodies to share)"
            : fmt::format(" on {} threads", team_size(sim.run_threads()));
    fmt::print(human, "nbody run: {} bodies ({}D), {}{}, {}, G = {:g}, softening = {:g}{}\n",
               sim.size(), dim, sim.solver_name(), threads, stepping, a.gravity.G,
               a.gravity.softening,
               ranks && ranks->parts() > 1
                   ? fmt::format(", on {} MPI ranks{}", ranks->parts(),
                                 why.empty() ? "" : " (each holds every body: " + why + ")")
                   : std::string());
    if (sim.active_count() < sim.size()) {
      fmt::print(human, "test particles: {} of {} bodies, type {} ({})\n",
                 sim.size() - sim.active_count(), sim.size(), sim.test_particle_type(),
                 sim.test_particle_type() == 0 ? "they feel the active bodies only"
                                               : "they also pull on the active bodies");
    }
    fmt::print(human, "energy: {} ({})\n", to_string(energy), energy_choice.reason);
    if (resumed)
      fmt::print(human, "restart: from {} at step {}, t = {:.6g}\n", restart->string(), first_step,
                 sim.time());
    if (collide) {
      fmt::print(human, "collisions: {}{}, {} pass(es) per step\n", to_string(a.collisions.model),
                 a.collisions.model == CollisionModel::Bounce
                     ? fmt::format(", restitution {:g}", a.collisions.restitution)
                     : std::string(),
                 a.collisions.iterations);
    }
    std::fflush(human);  // before the progress line, which goes to stderr
  }

  // The forces at the start (what the first step would compute first), with the
  // potentials when the start energy or the first snapshot needs them: snapshot_0000 then
  // holds the accelerations and potentials of the initial positions.
  sim.evaluate_forces(energy == EnergyMethod::Solver || snapshots.wants_potential());
  Diagnostics now = sim.diagnostics();
  // The whole state for an output, on rank 0 (null elsewhere). A decomposed run (every rank
  // owns its bodies, docs/distributed.md) gathers it: every rank must take part, so every
  // rank calls this at the same points.
  auto output_state = [&]() -> const ParticleSystem* {
    if (sim.decomposed()) {
      const ParticleSystem& all = sim.all_particles();
      return root ? &all : nullptr;
    }
    return root ? &sim.particles() : nullptr;
  };
  // Diagnostics are collective in a decomposed run: every rank computes the ones rank 0
  // reports.
  const bool diagnose_everywhere = sim.decomposed();
  // Snapshots and checkpoints of a decomposed run: every rank writes its own bodies into the
  // one file, together (no gather); other outputs gather them for rank 0.
  ForceReducer* const share = sim.decomposed() ? ranks.get() : nullptr;
  const double e0 = resumed ? resumed->initial_energy : now.total_energy;
  auto write_snapshot_now = [&] {
    // The solver's potentials (a gravity pass when this step did not compute them), on
    // every rank: with several processes the shares are summed.
    if (snapshots.wants_potential()) sim.evaluate_forces(true);
    ScopedPhase phase(sim.times(), "io");
    io_detail::IoTrace trace(fmt::format("rank {} snapshot", share ? share->part() : 0));
    const ParticleSystem* ps = share ? &sim.particles() : output_state();
    trace.mark("state");
    if (!ps) return snapshots.skip(sim.time());
    snapshots.write(*ps, snapshots.wants_potential() ? &ps->potential : nullptr, share);
  };
  auto write_checkpoint_now = [&] {
    ScopedPhase phase(sim.times(), "io");
    io_detail::IoTrace trace(fmt::format("rank {} checkpoint", share ? share->part() : 0));
    const ParticleSystem* ps = share ? &sim.particles() : output_state();
    trace.mark("state");
    if (!ps) return checkpoints.skip(sim.steps_done());
    CheckpointState state;  // its particles stay empty: *ps is written in place
    state.step = sim.steps_done();
    state.initial_energy = e0;
    state.collisions = sim.collision_totals();
    state.next_snapshot = snapshots.next_index();
    state.next_snapshot_time = snapshots.next_time();
    state.snapshot_origin = snapshots.origin();
    state.parameters = parameters;
    state.integrator = sim.integrator_state();
    if (share) state.decomposition = sim.decomposition_state();
    return checkpoints.write(state, *ps, share);
  };
  // -o and --every: an HDF5 file of a decomposed run is written by every rank at once, as
  // the snapshots are (a billion bodies are never gathered); text and CSV go through rank 0.
  auto write_result = [&](const fs::path& path) {
    ScopedPhase phase(sim.times(), "io");
    const FileFormat format = resolve_format(a.output, a.format);
    if (share && format == FileFormat::Hdf5) {
      write_snapshot_share(path, sim.particles(),
                           SnapshotOptions{.precision = SnapshotPrecision::Double}, nullptr,
                           *share);
    } else if (const ParticleSystem* ps = output_state()) {
      write_particles(path, *ps, format);
    }
  };
  auto log_energy = [&](const Diagnostics& d) {
    if (!energy_log) return;
    energy_log->append(sim.steps_done(), sim.time(), d, e0, sim.collision_totals().energy_lost);
  };
  // --every K: a numbered copy of the state and an energy line at the first step, every K
  // steps and the last step, like a snapshot series (a restart goes on from its step).
  auto every_output = [&] {
    const std::uint64_t s = sim.steps_done();
    if (!a.output.empty()) write_result(numbered_path(a.output, s));
    const bool energy_line = has_energy && (talk || diagnose_everywhere);
    const double drift =
        energy_line ? relative_energy_drift(e0, sim.diagnostics().total_energy) : 0.0;
    if (!talk) return;
    if (has_energy) {
      fmt::print(human, "step {:>8}  t = {:<12.6g} |dE/E| = {:.3e}\n", s, sim.time(), drift);
    } else {
      fmt::print(human, "step {:>8}  t = {:<12.6g}\n", s, sim.time());
    }
  };
  if (!resumed) {
    if (energy_log) log_energy(now);
    if (snapshots.enabled()) write_snapshot_now();
    if (a.every > 0) every_output();
  }

  // ---- the steps -------------------------------------------------------------------
  const std::size_t n_start = sim.size();
  InterruptGuard interrupts;
  ProgressLine progress(stderr, last_step, talk, first_step);
  progress.set_energy_cost(sim.times().get("diagnostics"));
  if (own_steps && until_time) progress.by_time(sim.time(), a.t_end);
  auto drift_now = [&] { return relative_energy_drift(e0, sim.diagnostics().total_energy); };
  // With solver energies, the steps whose energy is read compute the potentials with their
  // forces (then the energy costs O(N)). Decided alike on every rank: the potentials are
  // summed over the processes with the forces.
  auto energy_read_after = [&](std::uint64_t step) {
    return (out.stats_every > 0 && step % out.stats_every == 0) ||
           (a.every > 0 && step % a.every == 0) || (last_step > 0 && step >= last_step);
  };
  // IAS15's next landing: --t-end, or the next --snapshot-dt time when that comes first.
  auto own_step_limit = [&] {
    double limit = until_time ? a.t_end : std::numeric_limits<double>::infinity();
    if (snapshots.enabled() && snapshots.next_time() > sim.time())
      limit = std::min(limit, snapshots.next_time());
    return limit;
  };
  const auto wall_start = std::chrono::steady_clock::now();
  std::uint64_t logged_step = first_step;
  while (more_steps()) {
    bool progress_energy = false;
    if (energy == EnergyMethod::Solver) {
      progress_energy = all_ranks_max(root && progress.wants_energy() ? 1 : 0) != 0;
      if (progress_energy || energy_read_after(sim.steps_done() + 1)) sim.request_potentials();
    }
    if (own_steps) {
      sim.own_step(a.dt, own_step_limit());
    } else {
      sim.step(next_dt());
    }
    const std::uint64_t s = sim.steps_done();
    const bool last = !more_steps();
    if (out.stats_every > 0 && s % out.stats_every == 0) {
      if (root || diagnose_everywhere) {
        const Diagnostics d = sim.diagnostics();
        if (root) log_energy(d);
      }
      logged_step = s;
    }
    if (snapshots.enabled() && snapshots.due(s, sim.time())) write_snapshot_now();
    if (a.every > 0 && (s % a.every == 0 || last)) {
      if (talk) progress.finish();
      every_output();
    }
    // Every rank must take the same decisions at the same step (a signal may reach them
    // at different steps; the wall clock is rank 0's).
    if (checkpointing && !last && all_ranks_max(root && checkpoints.due(s) ? 1 : 0) != 0)
      write_checkpoint_now();
    if (const int sig = all_ranks_max(InterruptGuard::pending()); sig != 0 && !last) {
      progress.finish();
      const fs::path written = write_checkpoint_now();
      if (root) {
        fmt::print(stderr,
                   "nbody run: {} at step {} (t = {:.6g}): wrote {}; continue with the same "
                   "command and --restart {}\n",
                   signal_name(sig), s, sim.time(), written.string(), written.string());
      }
      return 128 + sig;
    }
    // Solver energies only where this step computed the potentials (no gravity pass, and
    // no collective call on one rank alone); exact ones when they cost little (the line's
    // own rule).
    const bool drift_cheap = energy == EnergyMethod::Exact || energy == EnergyMethod::Tree ||
                             (energy == EnergyMethod::Solver && progress_energy);
    if (diagnose_everywhere) {
      // Rank 0's line decides, every rank computes the drift it shows.
      const bool wanted = drift_cheap && all_ranks_max(root && progress.wants_energy()) != 0;
      const double drift = wanted ? drift_now() : 0.0;
      progress.update(s, sim.time(),
                      wanted ? std::function<double()>([drift] { return drift; }) : nullptr);
    } else {
      progress.update(s, sim.time(), drift_cheap ? std::function<double()>(drift_now) : nullptr);
    }
  }
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  progress.finish();

  // ---- the end ---------------------------------------------------------------------
  RunResult result;
  result.steps = sim.steps_done() - first_step;
  result.wall_seconds = wall;
  result.initial_energy = e0;
  result.end = sim.diagnostics();
  result.n_start = n_start;
  result.energy = energy_choice;
  result.warnings = energy_warnings(a, sim, e0, result.end);
  if (out.stats_every > 0 && logged_step != sim.steps_done() && result.steps > 0)
    log_energy(result.end);
  // A run given --restart ends with a checkpoint, so `--restart latest` goes on from here.
  if ((checkpointing || !out.restart.empty()) && result.steps > 0) write_checkpoint_now();
  if (!a.output.empty()) write_result(a.output);
  sim.times().add("io", io_times.get("io") + a.restart.read_seconds);
  if (talk) print_run_summary(human, a, sim, result);
  std::fflush(human);  // the warnings (stderr) after the summary
  if (root)
    for (const std::string& w : result.warnings) fmt::print(stderr, "nbody: warning: {}\n", w);
  if (a.json) print_run_json(a, sim, result);
  return 0;
}

}  // namespace nbody::cli
