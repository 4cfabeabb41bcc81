#include "python/run_outputs.hpp"

#include <cmath>

#include <fmt/format.h>

#include "nbody/error.hpp"
#include "nbody/input_error.hpp"
#include "python/saved_options.hpp"

namespace nbody::python {

namespace {

cli::OutputOptions cli_options(const OutputRequest& r) {
  cli::OutputOptions o;
  o.output_dir = r.dir.string();
  o.snapshot_dt = r.snapshot_dt;
  o.snapshot_every = r.snapshot_every;
  o.stats_every = r.stats_every;
  o.checkpoint_every = r.checkpoint_every;
  o.checkpoint_keep = r.checkpoint_keep;
  return o;
}

/// The outputs as the command line's used_parameters.toml names them, for the record.
std::string outputs_toml(const OutputRequest& r) {
  return fmt::format(
      "output-dir = \"{}\"\nsnapshot-dt = {}\nsnapshot-every = {}\nstats-every = {}\n"
      "checkpoint-every = {}\ncheckpoint-keep = {}\n",
      r.dir.string(), r.snapshot_dt, r.snapshot_every, r.stats_every, r.checkpoint_every,
      r.checkpoint_keep);
}

}  // namespace

void validate(const OutputRequest& r) {
  if (!(r.snapshot_dt >= 0) || !std::isfinite(r.snapshot_dt))
    throw input_error("snapshot_dt", "must be a finite number >= 0 (0: none)", r.snapshot_dt);
  if (r.snapshot_dt > 0 && r.snapshot_every > 0)
    throw input_error("snapshot_dt", "give snapshot_dt or snapshot_every, not both", r.snapshot_dt);
  if (r.checkpoint_keep < 1)
    throw input_error("checkpoint_keep", "must be >= 1", r.checkpoint_keep);
  if (r.dir.empty()) throw input_error("output_dir", "is empty: name a folder");
}

RunOutputs::RunOutputs(PySimulation& sim, const OutputRequest& request)
    : sim_(sim),
      request_(request),
      snapshots_(request.dir, cli_options(request), sim.time()),
      checkpoints_(request.dir, cli_options(request)) {
  std::error_code ec;
  std::filesystem::create_directories(request.dir, ec);
  if (ec) {
    throw Error(fmt::format("{}: cannot create the output folder ({})", request.dir.string(),
                            ec.message()));
  }
  const bool resumed = sim.resumed_outputs.valid;
  if (resumed) {
    snapshots_.resume(sim.resumed_outputs.next_snapshot, sim.resumed_outputs.next_snapshot_time,
                      sim.resumed_outputs.snapshot_origin);
    sim.resumed_outputs.valid = false;
  }
  if (request.stats_every > 0) {
    log_.emplace(request.dir / "energy.csv", request.stats_every, resumed, sim.steps_done());
    if (!resumed) {
      log_->append(sim.steps_done(), sim.time(), sim.diagnostics(), sim.initial_energy(),
                   sim.collision_totals().energy_lost);
    }
  }
  take_options();
  if (snapshots_.enabled() && !resumed) write_snapshot();
}

void RunOutputs::after_step() {
  const std::uint64_t step = sim_.steps_done();
  if (snapshots_.enabled() && snapshots_.due(step, sim_.time())) {
    write_snapshot();
  }
  if (log_ && step % request_.stats_every == 0) {
    log_->append(step, sim_.time(), sim_.diagnostics(), sim_.initial_energy(),
                 sim_.collision_totals().energy_lost);
  }
  if (checkpoints_.due(step)) {
    const CheckpointState state = checkpoint_state();
    checkpoints_.write(state, state.particles);
  }
}

double RunOutputs::next_stop(double t_end) const {
  if (request_.snapshot_dt > 0 && snapshots_.next_time() > sim_.time() &&
      snapshots_.next_time() < t_end)
    return snapshots_.next_time();
  return t_end;
}

CheckpointState RunOutputs::checkpoint_state() const {
  CheckpointState state = python::checkpoint_state(sim_, options_toml_, this);
  state.next_snapshot = snapshots_.next_index();
  state.next_snapshot_time = snapshots_.next_time();
  state.snapshot_origin = snapshots_.origin();
  return state;
}

void RunOutputs::take_options() {
  options_toml_ = parameters_toml(sim_.options());
  parameters_ = snapshot_parameters(sim_.options());
}

void RunOutputs::write_snapshot() {
  // The series' numbering and schedule, and the run options in /Parameters as save()
  // writes them, so that nbody.load() of any snapshot brings them back.
  const auto path = request_.dir / fmt::format("snapshot_{:04d}.hdf5", snapshots_.next_index());
  nbody::write_snapshot(
      path, sim_.state(),
      SnapshotOptions{.precision = SnapshotPrecision::Double, .parameters = &parameters_});
  snapshots_.skip(sim_.time());
}

CheckpointState checkpoint_state(PySimulation& sim, const std::string& options_toml,
                                 const RunOutputs* outputs) {
  CheckpointState state;
  state.initial_energy = sim.initial_energy();
  state.particles = sim.state();
  state.step = sim.steps_done();
  state.collisions = sim.collision_totals();
  state.next_snapshot_time = sim.time();
  state.snapshot_origin = sim.time();
  state.parameters = options_toml;
  if (outputs) state.parameters += outputs_toml(outputs->request());
  state.integrator = sim.integrator_state();
  return state;
}

}  // namespace nbody::python
