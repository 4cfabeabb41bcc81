#include "cli/run/run_report.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/json_output.hpp"
#include "cli/progress.hpp"
#include "nbody/build_info.hpp"

namespace nbody::cli {

namespace {

/// The bodies this process holds: its own in a decomposed run, else every one.
std::size_t bodies_here(Simulation& sim) {
  return sim.decomposed() ? sim.decomposition().owned : sim.size();
}

/// --timings: milliseconds per step of each stage of the force evaluation (the GPU tree:
/// bbox, sort, build, summarise, force; the CPU tree: build, walk) and of the rest of the
/// step, with each one's share of the step (seed 000 table 3.2, seed 003 figs 7-8).
void print_stage_table(std::FILE* out, Simulation& sim, std::uint64_t steps) {
  if (steps == 0) return;
  const PhaseTimes& phases = sim.times();
  const double step_seconds =
      phases.get("gravity") + phases.get("collisions") + phases.get("integrate");
  const double per = 1e3 / double(steps);
  const double step_ms = step_seconds * per;
  auto row = [&](const std::string& name, double seconds) {
    fmt::print(out, "{:<14} {:>10.4f} {:>7.1f}%\n", name, seconds * per,
               step_ms > 0 ? 100.0 * seconds * per / step_ms : 0.0);
  };
  fmt::print(out, "{:<14} {:>10} {:>8}\n", "stage", "ms/step", "share");
  double staged = 0;
  for (const auto& [name, seconds] : sim.gravity_stages().entries()) {
    row(name, seconds);
    staged += seconds;
  }
  if (staged == 0) row("gravity", phases.get("gravity"));
  const double other_gravity = phases.get("gravity") - staged;
  if (staged > 0 && other_gravity > 0) row("gravity other", other_gravity);  // packing, transfers
  if (phases.get("collisions") > 0) row("collisions", phases.get("collisions"));
  row("integrate", phases.get("integrate"));
  fmt::print(out, "{:<14} {:>10.4f} {:>7.1f}%\n", "step", step_ms, 100.0);
}

/// --timings with adaptive steps: the substeps, the force evaluations per body and the
/// bodies per bin at the end, as a histogram of bars.
void print_bin_table(std::FILE* out, const RunArgs& a, Simulation& sim, const RunResult& r) {
  const TimestepStats& ts = sim.timestep_stats();
  fmt::print(out, "substeps {}, force evaluations per body {:.4g} (steps {})\n", ts.substeps,
             r.n_start ? double(ts.force_evaluations) / double(r.n_start) : 0.0, r.steps);
  std::uint64_t most = 1;
  for (const std::uint64_t c : ts.bins) most = std::max(most, c);
  fmt::print(out, "{:<4} {:>12} {:>10}\n", "bin", "step", "bodies");
  for (std::size_t k = 0; k < ts.bins.size(); ++k) {
    const auto bar = std::size_t(std::ceil(40.0 * double(ts.bins[k]) / double(most)));
    fmt::print(out, "{:<4} {:>12.4g} {:>10}  {}\n", k, std::ldexp(a.dt, -int(k)), ts.bins[k],
               std::string(ts.bins[k] ? std::max<std::size_t>(bar, 1) : 0, '#'));
  }
}

/// The JSON `timestep` object.
nlohmann::ordered_json timestep_json(const RunArgs& a, Simulation& sim, const RunResult& r) {
  const TimestepStats& ts = sim.timestep_stats();
  const bool adaptive = has_bins(a.integrator.timestep);
  nlohmann::ordered_json j = {
      {"mode", to_string(a.integrator.timestep)},
      {"eta", adaptive ? nlohmann::ordered_json(a.integrator.eta) : nullptr},
      {"criterion",
       adaptive ? nlohmann::ordered_json(to_string(a.integrator.timestep_criterion)) : nullptr},
      {"dt_max", a.dt},
      {"dt_min", adaptive ? nlohmann::ordered_json(a.integrator.dt_min) : nullptr},
      {"bins", ts.bins},
      {"substeps", ts.substeps},
      {"force_evaluations_per_body",
       r.n_start ? double(ts.force_evaluations) / double(r.n_start) : 0.0},
      {"floored", ts.floored}};
  return j;
}

}  // namespace

std::string stepping_text(const RunArgs& a, const Simulation& sim, bool until_time,
                          std::uint64_t steps) {
  const IntegratorOptions& i = a.integrator;
  if (sim.own_steps()) {
    return fmt::format(
        "ias15 (epsilon = {:g}, {} step rule, first dt = {:g}), {}", i.ias15_epsilon,
        to_string(i.ias15_rule), a.dt,
        until_time ? fmt::format("until t = {:g}", a.t_end) : fmt::format("{} steps", steps));
  }
  const std::string bins =
      has_bins(i.timestep)
          ? fmt::format(" ({}: bins dt/2^k, {} criterion, eta = {:g})", to_string(i.timestep),
                        to_string(i.timestep_criterion), i.eta)
          : std::string();
  return fmt::format("{} dt = {:g}{}, {} steps", sim.integrator_name(), a.dt, bins, steps);
}

void print_run_summary(std::FILE* human, const RunArgs& a, Simulation& sim, const RunResult& r) {
  const double drift = relative_energy_drift(r.initial_energy, r.end.total_energy);
  const CollisionTotals& coll = sim.collision_totals();
  const double steps_per_second = r.wall_seconds > 0 ? double(r.steps) / r.wall_seconds : 0.0;
  fmt::print(human, "done: {} steps to t = {:.6g} (step {}) in {:.3f} s ({:.4g} steps/s)\n",
             r.steps, sim.time(), sim.steps_done(), r.wall_seconds, steps_per_second);
  if (r.end.has_energy()) {
    fmt::print(human, "energy ({}): {:.10g} -> {:.10g}, |dE/E| = {:.3e}\n",
               to_string(sim.energy_method()), r.initial_energy, r.end.total_energy, drift);
    // A drift smaller than the method's own error says nothing about the integration.
    if (r.steps > 0 && drift < r.energy.drift_error) {
      fmt::print(human,
                 "note: |dE/E| is within the ~{:.0e} error of the {} energy: --energy {} for a "
                 "meaningful drift\n",
                 r.energy.drift_error, to_string(sim.energy_method()),
                 sim.energy_method() == EnergyMethod::Solver &&
                         sim.gravity_options().algorithm == GravityAlgorithm::Tree
                     ? "tree or exact"
                     : "exact");
    }
  } else {
    fmt::print(human, "energy: not computed (--energy off)\n");
  }
  fmt::print(human,
             "momentum: ({:.3e}, {:.3e}, {:.3e})  angular momentum: ({:.6g}, {:.6g}, {:.6g})\n",
             r.end.momentum.x, r.end.momentum.y, r.end.momentum.z, r.end.angular_momentum.x,
             r.end.angular_momentum.y, r.end.angular_momentum.z);
  if (a.collisions.model != CollisionModel::None && r.end.has_energy()) {
    // With collisions the energy that left the bodies is booked, so E + lost is what is conserved.
    const double balance =
        relative_energy_drift(r.initial_energy, r.end.total_energy + coll.energy_lost);
    fmt::print(human,
               "collisions: {} contacts, {} merges ({} bodies left), max overlap {:.3g} of the "
               "smaller radius, energy lost {:.6g}, |d(E + lost)/E| = {:.3e}\n",
               coll.contacts, coll.merges, sim.size(), coll.max_overlap_last, coll.energy_lost,
               balance);
  }
  const TimestepStats& ts = sim.timestep_stats();
  if (has_bins(a.integrator.timestep)) {
    fmt::print(human,
               "{} steps: {} substeps, {:.4g} force evaluations per body ({} steps of "
               "{:g}), deepest bin {}\n",
               to_string(a.integrator.timestep), ts.substeps,
               r.n_start ? double(ts.force_evaluations) / double(r.n_start) : 0.0, r.steps, a.dt,
               ts.bins.empty() ? 0 : ts.bins.size() - 1);
    if (ts.floored > 0) {
      fmt::print(human,
                 "warning: {} body steps wanted a smaller step than --dt-min {:g} allows and were "
                 "taken at it (less accurate than --eta asks)\n",
                 ts.floored, a.integrator.dt_min);
    }
  }
  if (sim.own_steps()) {
    fmt::print(human,
               "ias15: {} steps, {} rejected, dt {:.4g} .. {:.4g} (last {:.4g}), {:.3g} "
               "predictor-corrector iterations and {:.3g} force evaluations a step\n",
               ts.steps, ts.rejected, ts.dt_min, ts.dt_max, ts.dt_last,
               ts.steps ? double(ts.iterations) / double(ts.steps) : 0.0,
               ts.steps ? double(ts.substeps) / double(ts.steps) : 0.0);
  }
  if (!a.output.empty()) fmt::print(human, "wrote {}\n", a.output);
  print_timing_table(human, sim.times(), r.steps);
  if (a.timings) print_stage_table(human, sim, r.steps);
  if (a.timings && a.gravity.device == Device::Gpu) {
    // This process's (rank 0's) buffers: what a body costs on the GPU (issue 36).
    const GpuBufferBytes b = gpu_buffer_bytes();
    const std::size_t n = std::max<std::size_t>(bodies_here(sim), 1);
    fmt::print(human,
               "GPU memory: {:.3f} GB in nbody's buffers at the end, {:.3f} GB at the most; {:.0f} "
               "bytes a body of the {} it holds{}\n",
               1e-9 * double(b.now), 1e-9 * double(b.peak), double(b.now) / double(n),
               bodies_here(sim), sim.decomposed() ? " (rank 0)" : "");
  }
  if (a.timings && has_bins(a.integrator.timestep)) {
    print_bin_table(human, a, sim, r);
  }
}

void print_run_json(const RunArgs& a, Simulation& sim, const RunResult& r) {
  const CollisionTotals& coll = sim.collision_totals();
  // --energy off: the energies were not computed, and say so (null) rather than 0.
  auto energy_or_null = [&](double v) {
    return r.end.has_energy() ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
  };
  nlohmann::ordered_json j = {
      {"n", r.n_start},
      {"dim", sim.gravity_options().dim},
      {"steps", r.steps},
      {"step", sim.steps_done()},
      {"t", sim.time()},
      {"dt", a.dt},
      {"integrator", sim.integrator_name()},
      {"solver", sim.solver_name()},
      {"G", a.gravity.G},
      {"softening", a.gravity.softening},
      {"energy_method", to_string(sim.energy_method())},
      {"energy_method_reason", r.energy.reason},
      {"energy_cost_estimate", r.energy.cost_share},
      {"energy_drift_error", energy_or_null(r.energy.drift_error)},
      {"energy_start", energy_or_null(r.initial_energy)},
      {"energy_end", energy_or_null(r.end.total_energy)},
      {"energy_drift", energy_or_null(relative_energy_drift(r.initial_energy, r.end.total_energy))},
      {"momentum", to_json(r.end.momentum)},
      {"angular_momentum", to_json(r.end.angular_momentum)},
      {"steps_per_second", r.wall_seconds > 0 ? double(r.steps) / r.wall_seconds : 0.0},
      {"wall_seconds", r.wall_seconds},
      {"timestep", timestep_json(a, sim, r)},
      {"timings", to_json(sim.times())}};
  if (sim.own_steps()) {
    // IAS15: `steps` counts its accepted steps; these say how they went (docs/json.md).
    const TimestepStats& ts = sim.timestep_stats();
    j["rejected_steps"] = ts.rejected;
    j["dt_last"] = ts.dt_last;
    j["dt_min"] = ts.dt_min;
    j["dt_max"] = ts.dt_max;
    j["ias15"] = {{"epsilon", a.integrator.ias15_epsilon},
                  {"adaptive", to_string(a.integrator.ias15_rule)},
                  {"iterations", ts.iterations},
                  {"force_evaluations", ts.substeps}};
  }
  if (!sim.gravity_stages().entries().empty()) j["gravity_stages"] = to_json(sim.gravity_stages());
  if (a.gravity.device == Device::Gpu) {
    const GpuBufferBytes b = gpu_buffer_bytes();
    const std::size_t n = bodies_here(sim);
    j["gpu_memory"] = {{"bytes", b.now},
                       {"peak_bytes", b.peak},
                       {"bodies", n},
                       {"bytes_per_body", n > 0 ? double(b.now) / double(n) : 0.0}};
  }
  if (a.collisions.model != CollisionModel::None) {
    j["collisions"] = {
        {"model", to_string(a.collisions.model)},
        {"restitution", a.collisions.restitution},
        {"iterations", a.collisions.iterations},
        {"contacts", coll.contacts},
        {"merges", coll.merges},
        {"n_end", sim.size()},
        {"max_overlap", coll.max_overlap_last},
        {"energy_lost", coll.energy_lost},
        {"energy_balance", energy_or_null(relative_energy_drift(
                               r.initial_energy, r.end.total_energy + coll.energy_lost))}};
  }
  if (sim.active_count() < sim.size())  // not downloaded from the GPU for this
    j["test_particles"] =
        test_particles_json(sim.active_count(), sim.size(), sim.test_particle_type());
  if (!a.output.empty()) j["output"] = a.output;
  j["warnings"] = r.warnings;
  if (a.restart.file) {
    // Where the run went on from, and the physics --override changed (docs/json.md).
    nlohmann::ordered_json changes = nlohmann::ordered_json::array();
    for (const RestartChange& c : a.restart.changes)
      changes.push_back({{"option", c.option}, {"checkpoint", c.before}, {"now", c.after}});
    j["restart"] = {{"checkpoint", a.restart.file->string()},
                    {"step", a.restart.step},
                    {"t", a.restart.time},
                    {"changes", changes}};
  }
  fmt::print("{}\n", j.dump(2));
}

}  // namespace nbody::cli
