#include "cli/run/run_report.hpp"

#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/json_output.hpp"
#include "cli/progress.hpp"

namespace nbody::cli {

namespace {

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

}  // namespace

void print_run_summary(std::FILE* human, const RunArgs& a, Simulation& sim, const RunResult& r) {
  const double drift = relative_energy_drift(r.initial_energy, r.end.total_energy);
  const CollisionTotals& coll = sim.collision_totals();
  const double steps_per_second = r.wall_seconds > 0 ? double(r.steps) / r.wall_seconds : 0.0;
  fmt::print(human, "done: {} steps to t = {:.6g} (step {}) in {:.3f} s ({:.4g} steps/s)\n",
             r.steps, sim.time(), sim.steps_done(), r.wall_seconds, steps_per_second);
  if (r.end.has_energy()) {
    fmt::print(human, "energy ({}): {:.10g} -> {:.10g}, |dE/E| = {:.3e}\n",
               to_string(sim.energy_method()), r.initial_energy, r.end.total_energy, drift);
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
  if (!a.output.empty()) fmt::print(human, "wrote {}\n", a.output);
  print_timing_table(human, sim.times(), r.steps);
  if (a.timings) print_stage_table(human, sim, r.steps);
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
      {"energy_start", energy_or_null(r.initial_energy)},
      {"energy_end", energy_or_null(r.end.total_energy)},
      {"energy_drift", energy_or_null(relative_energy_drift(r.initial_energy, r.end.total_energy))},
      {"momentum", to_json(r.end.momentum)},
      {"angular_momentum", to_json(r.end.angular_momentum)},
      {"steps_per_second", r.wall_seconds > 0 ? double(r.steps) / r.wall_seconds : 0.0},
      {"wall_seconds", r.wall_seconds},
      {"timings", to_json(sim.times())}};
  if (!sim.gravity_stages().entries().empty()) j["gravity_stages"] = to_json(sim.gravity_stages());
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
  if (!a.output.empty()) j["output"] = a.output;
  fmt::print("{}\n", j.dump(2));
}

}  // namespace nbody::cli
