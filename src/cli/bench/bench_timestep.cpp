// nbody bench timestep: fixed against adaptive (block) time steps (issue #19). One model is
// integrated to a fixed end time with a ladder of fixed steps dt and, at the largest dt, with
// adaptive steps over a ladder of eta; each run records its wall time (a clock around the step
// loop), its force evaluations per body, its bins and its energy error at the end. The
// headline compares the two at equal energy error (fixed_cost_at below).
#include "cli/bench/bench_timestep.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "nbody/build_info.hpp"
#include "nbody/diagnostics.hpp"
#include "nbody/error.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/input_error.hpp"
#include "nbody/simulation.hpp"

namespace nbody::cli::bench {

namespace {

using json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

struct Run {
  std::uint64_t steps = 0, substeps = 0;
  double evaluations_per_body = 0;
  std::size_t deepest_bin = 0;  // the deepest bin populated at the end of any step
  double wall_seconds = 0;
  double energy_error = 0;
  std::array<double, 3> lagrangian{};  // radii holding 10, 50, 90 % of the mass at the end
};

/// The radii about the centre of mass that hold 10, 50 and 90 % of the mass.
std::array<double, 3> lagrangian_radii(const ParticleSystem& ps) {
  const Vec3 com = compute_moments(ps).com;
  std::vector<std::pair<double, double>> rm(ps.size());  // r^2, mass
  for (std::size_t i = 0; i < ps.size(); ++i) {
    const double dx = ps.x[i] - com.x, dy = ps.y[i] - com.y, dz = ps.z[i] - com.z;
    rm[i] = {dx * dx + dy * dy + dz * dz, ps.mass[i]};
  }
  const std::vector<double> r = mass_radii(std::move(rm), {0.1, 0.5, 0.9});
  return {r[0], r[1], r[2]};
}

/// The largest relative difference of the three radii from the reference run's.
double lagrangian_error(const std::array<double, 3>& a, const std::array<double, 3>& ref) {
  double e = 0;
  for (int k = 0; k < 3; ++k) e = std::max(e, std::abs(a[k] - ref[k]) / ref[k]);
  return e;
}

/// One run from t = 0 to t_end in steps of dt (the last one shortened to land on t_end).
Run integrate(const ParticleSystem& ps, const GravityOptions& g, const IntegratorOptions& integ,
              double dt, double t_end) {
  Simulation sim(ps, g, integ);
  const double e0 = sim.diagnostics().total_energy;  // outside the clock; spins threads up
  Run r;
  r.steps = steps_to_reach(sim.time(), t_end, dt);
  const auto start = Clock::now();
  for (std::uint64_t s = 0; s < r.steps; ++s) {
    if (s + 1 == r.steps) sim.request_potentials();  // the Solver energy: in the last pass
    sim.step(step_toward(sim.time(), t_end, dt));
    const auto& bins = sim.timestep_stats().bins;
    if (integ.timestep == TimestepMode::Adaptive && bins.empty()) {  // a stepper without them
      throw Error(
          fmt::format("bench timestep --device {}: this stepper took no adaptive (block) "
                      "steps; use --device cpu",
                      g.device == Device::Gpu ? "gpu" : "cpu"));
    }
    for (std::size_t k = bins.size(); k-- > r.deepest_bin;) {
      if (bins[k] > 0) {
        r.deepest_bin = k;
        break;
      }
    }
  }
  r.wall_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const TimestepStats& ts = sim.timestep_stats();
  r.substeps = ts.substeps;
  r.evaluations_per_body = double(ts.force_evaluations) / double(ps.size());
  r.energy_error = std::abs((sim.diagnostics().total_energy - e0) / e0);
  r.lagrangian = lagrangian_radii(sim.particles());
  return r;
}

/// The fixed steps' cost (force evaluations or seconds) at the energy error `e`: along the
/// fixed runs' front (cost ascending, error strictly falling), interpolated in log-log between
/// the two runs around e; above the cheapest run's error, that run's cost (no extrapolation);
/// below the most accurate run's error, none.
std::optional<double> fixed_cost_at(std::vector<std::pair<double, double>> cost_error, double e) {
  std::sort(cost_error.begin(), cost_error.end());
  std::vector<std::pair<double, double>> front;
  for (const auto& p : cost_error)
    if (front.empty() || p.second < front.back().second) front.push_back(p);
  if (front.empty() || e < front.back().second) return std::nullopt;
  if (e >= front.front().second) return front.front().first;
  const auto tiny = [](double v) { return std::log(std::max(v, 1e-300)); };
  for (std::size_t i = 0; i + 1 < front.size(); ++i) {
    const auto [c0, e0] = front[i];
    const auto [c1, e1] = front[i + 1];
    if (e < e1) continue;
    const double f = (tiny(e0) - tiny(e)) / (tiny(e0) - tiny(e1));
    return std::exp(std::log(c0) + f * (std::log(c1) - std::log(c0)));
  }
  return std::nullopt;
}

std::vector<double> ladder_or(const std::vector<double>& given, std::vector<double> fallback,
                              const char* option) {
  std::vector<double> v = given.empty() ? std::move(fallback) : given;
  for (const double x : v)
    if (!(x > 0) || !std::isfinite(x)) throw input_error(option, "must be positive and finite", x);
  std::sort(v.begin(), v.end(), std::greater<>());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

/// The fixed runs' force evaluations at each adaptive run's Lagrangian-radius error, on
/// their front as for the energy (fixed_cost_at), the reference run (row `reference`,
/// error 0 by definition) left out: a note.
void compare_lagrangian(SuiteResult& r, std::size_t reference) {
  std::vector<std::pair<double, double>> evals;
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    if (r.rows[i][0] != "fixed" || i == reference) continue;
    evals.emplace_back(r.rows[i][6].get<double>(), r.rows[i][14].get<double>());
  }
  std::vector<std::string> parts;
  for (const auto& row : r.rows) {
    if (row[0] == "fixed") continue;
    const double e = row[14].get<double>();
    const std::optional<double> fe = fixed_cost_at(evals, e);
    parts.push_back(fe ? fmt::format("{} ×{:.3g} ({:.2g})", row[3].get<std::string>(),
                                     row[6].get<double>() / *fe, e)
                       : fmt::format("{} - ({:.2g})", row[3].get<std::string>(), e));
  }
  r.notes.push_back(fmt::format(
      "Lagrangian radii (10, 50, 90 % of the mass about the centre of mass, at the end): "
      "lagrangian_error is the largest relative difference from the smallest fixed step's. "
      "At equal error, adaptive over fixed force evaluations (error in brackets; - : more "
      "accurate than every other fixed run): {}.",
      fmt::join(parts, ", ")));
}

/// The headline and the per-run ratios (the last two columns of the adaptive rows).
void compare(SuiteResult& r) {
  std::vector<std::pair<double, double>> evals, wall;
  for (const auto& row : r.rows) {
    if (row[0] != "fixed") continue;
    evals.emplace_back(row[6].get<double>(), row[10].get<double>());
    wall.emplace_back(row[9].get<double>(), row[10].get<double>());
  }
  std::vector<std::string> parts;
  double best = 0, lo_e = 1e300, hi_e = 0, lo_w = 1e300, hi_w = 0;
  std::string best_text;
  for (auto& row : r.rows) {
    if (row[0] == "fixed") continue;
    const double e = row[10].get<double>();
    const std::optional<double> fe = fixed_cost_at(evals, e), fw = fixed_cost_at(wall, e);
    if (fe) row[11] = row[6].get<double>() / *fe;
    if (fw) row[12] = row[9].get<double>() / *fw;
    if (!fe || !fw) continue;
    const double re = row[11].get<double>(), rw = row[12].get<double>();
    lo_e = std::min(lo_e, re), hi_e = std::max(hi_e, re);
    lo_w = std::min(lo_w, rw), hi_w = std::max(hi_w, rw);
    parts.push_back(row[3].get<std::string>());
    if (best_text.empty() || rw < best) {
      best = rw;
      best_text = fmt::format("{}: ×{:.3g} the evaluations, ×{:.3g} the time at |ΔE/E| = {:.3g}",
                              row[3].get<std::string>(), re, rw, e);
    }
  }
  if (parts.empty()) {
    r.notes.insert(r.notes.begin(),
                   "Headline: no adaptive run could be compared (each is more accurate than every "
                   "fixed run).");
    return;
  }
  const auto range = [](double lo, double hi) {
    const std::string l = fmt::format("{:.3g}", lo), h = fmt::format("{:.3g}", hi);
    return "×" + (l == h ? l : l + "-" + h);
  };
  r.notes.insert(
      r.notes.begin(),
      fmt::format("Headline: at equal |ΔE/E|, adaptive over fixed steps: force "
                  "evaluations per body {}, wall time {} (below 1: adaptive is cheaper; {}; "
                  "best: {}).",
                  range(lo_e, hi_e), range(lo_w, hi_w), fmt::join(parts, ", "), best_text));
}

}  // namespace

std::string default_timestep_model() {
  const std::vector<std::string> names = model_names();
  return std::find(names.begin(), names.end(), "hernquist") != names.end() ? "hernquist"
                                                                           : "plummer";
}

SuiteResult timestep_suite(const BenchArgs& a, const TimestepBenchArgs& t, std::FILE* progress) {
  if (a.device == "all")
    throw input_error("--device", "bench timestep runs on one device (cpu or gpu)", "all");
  if (a.gravity != "direct" && a.gravity != "tree")
    throw input_error("--gravity", "bench timestep takes direct or tree", a.gravity);
  (void)bench_devices(a);  // --device gpu without a usable GPU: say so now
  const std::string model = t.model.empty() ? default_timestep_model() : t.model;
  const double t_end = t.t_end > 0 ? t.t_end : kTimestepDefaultTEnd;
  if (!std::isfinite(t_end)) throw Error("--t-end: must be positive and finite");
  const std::vector<double> dts =
      ladder_or(t.dts,
                a.quick ? std::vector<double>{t_end / 16, t_end / 128}
                        : std::vector<double>{t_end / 16, t_end / 32, t_end / 64, t_end / 128,
                                              t_end / 256, t_end / 512},
                "--dts");
  const std::vector<double> etas =
      ladder_or(t.etas,
                a.quick ? std::vector<double>{0.1, 0.025}
                        : std::vector<double>{0.1, 0.05, 0.025, 0.0125, 0.00625},
                "--etas");
  std::vector<TimestepCriterion> criteria;
  for (const std::string& name : t.criteria) {
    const TimestepCriterion c = parse_timestep_criterion(name);
    if (std::find(criteria.begin(), criteria.end(), c) == criteria.end()) criteria.push_back(c);
  }
  if (criteria.empty()) criteria = {TimestepCriterion::Acceleration, TimestepCriterion::Dynamical};
  std::vector<std::string> criterion_names;
  for (const TimestepCriterion c : criteria) criterion_names.emplace_back(to_string(c));
  GravityOptions g;
  g.algorithm = parse_gravity_algorithm(a.gravity);
  g.device = a.device == "gpu" ? Device::Gpu : Device::Cpu;
  g.precision = parse_precision(a.precision);
  g.softening = softening_or(a, kBenchSoftening);
  g.theta = a.theta;
  g.quadrupole = a.quadrupole;
  g.threads = a.threads;
  // Before any run: the jerk is summed over every pair on the host (docs/timesteps.md).
  if (std::find(criteria.begin(), criteria.end(), TimestepCriterion::Jerk) != criteria.end() &&
      (g.algorithm != GravityAlgorithm::Direct || g.device != Device::Cpu)) {
    throw input_error("--timestep-criteria",
                      "jerk needs --gravity direct and --device cpu (the jerk is summed over "
                      "every pair)",
                      fmt::format("{}", fmt::join(criterion_names, ",")));
  }

  ModelOptions m;
  m.model = model;
  m.n = a.n;
  m.seed = t.seed;
  const ParticleSystem ps = generate(m);
  const bool tree = g.algorithm == GravityAlgorithm::Tree;
  const EnergyMethod energy = resolve_energy_method(EnergyMethod::Auto, g.algorithm, ps.size());

  SuiteResult r;
  r.suite = "timestep";
  r.title = "Fixed against adaptive time steps: energy error against cost (issue #19)";
  r.meta = base_meta(a);
  const BuildInfo info = build_info();
  std::string command = fmt::format(
      "nbody bench timestep --model {} -n {} --softening {:g} --gravity {}{} --precision {} "
      "--device {} --t-end {} --dts {} --etas {} --timestep-criteria {} --seed {}{}",
      model, ps.size(), g.softening, a.gravity, tree ? fmt::format(" --theta {:g}", g.theta) : "",
      a.precision, a.device, t_end, fmt::join(dts, ","), fmt::join(etas, ","),
      fmt::join(criterion_names, ","), t.seed,
      t.modes.empty() ? "" : fmt::format(" --timestep-modes {}", fmt::join(t.modes, ",")));
  if (a.quadrupole) command += " --quadrupole";
  if (a.quick) command += " --quick";
  for (const auto& [key, value] :
       {std::pair<const char*, json>{"model", model},
        {"n", ps.size()},
        {"gravity", a.gravity},
        {"theta", tree ? json(g.theta) : json(nullptr)},
        {"precision", to_string(resolve_precision(g.precision, g.algorithm))},
        {"softening", g.softening},
        {"t_end", t_end},
        {"energy_method", to_string(energy)},
        {"dts", dts},
        {"etas", etas},
        {"criteria", criterion_names},
        {"seed", t.seed},
        {"version", info.version},
        {"compiler", info.compiler},
        {"command", command}})
    r.meta[key] = value;
  r.columns = {"mode",
               "dt",
               "eta",
               "label",
               "steps",
               "substeps",
               "force_evaluations_per_body",
               "deepest_bin",
               "smallest_step",
               "wall_seconds",
               "energy_error",
               "evaluations_vs_fixed",
               "wall_vs_fixed",
               "criterion",
               "lagrangian_error"};

  std::vector<std::array<double, 3>> radii;  // each row's, for the errors at the end
  auto run = [&](const IntegratorOptions& integ, double dt, const std::string& label) {
    const bool adaptive = has_bins(integ.timestep);
    const std::string mode(to_string(integ.timestep));
    const Run x = integrate(ps, g, integ, dt, t_end);
    radii.push_back(x.lagrangian);
    fmt::print(progress,
               "timestep: {:<8} {:<12} {:>6} steps {:>8} substeps {:>8.4g} evals/body  {:>8.3f} s  "
               "|ΔE/E| {:.3e}\n",
               mode, label, x.steps, x.substeps, x.evaluations_per_body, x.wall_seconds,
               x.energy_error);
    std::fflush(progress);
    r.add_row({mode, dt, adaptive ? json(integ.eta) : json(nullptr), label, x.steps, x.substeps,
               x.evaluations_per_body, x.deepest_bin, std::ldexp(dt, -int(x.deepest_bin)),
               x.wall_seconds, x.energy_error, nullptr, nullptr,
               adaptive ? json(to_string(integ.timestep_criterion)) : json(nullptr), nullptr});
  };
  IntegratorOptions adaptive;
  adaptive.timestep = TimestepMode::Adaptive;
  if (g.device == Device::Gpu) (void)integrate(ps, g, adaptive, dts.front(), dts.front());  // probe
  for (const double dt : dts) run(IntegratorOptions{}, dt, fmt::format("dt {:.4g}", dt));
  auto wanted = [&](const char* mode) {
    return std::find(t.modes.begin(), t.modes.end(), mode) != t.modes.end();
  };
  for (const TimestepCriterion c : criteria) {
    if (!t.modes.empty() && !wanted("adaptive")) break;
    adaptive.timestep_criterion = c;
    for (const double eta : etas) {
      adaptive.eta = eta;
      run(adaptive, dts.front(), fmt::format("{} η {:g}", to_string(c).substr(0, 3), eta));
    }
  }
  // The momentum-conserving scheme (the acceleration criterion, the CPU).
  if (wanted("hierarchical")) {
    r.notes.push_back(
        "hierarchical (--timestep hierarchical, momentum kept to rounding): its "
        "force_evaluations_per_body count the bodies of each level's evaluations, which pair "
        "the level's slow bodies with all of its bodies and its fast ones with the slow ones "
        "only, not each with all N: compare the wall times.");
    IntegratorOptions hold;
    hold.timestep = TimestepMode::Hierarchical;
    for (const double eta : etas) {
      hold.eta = eta;
      run(hold, dts.front(), fmt::format("hold η {:g}", eta));
    }
  }
  // The Lagrangian radii against the most accurate fixed run's (the smallest dt, the last
  // fixed row): how far each run's structure is from the converged one.
  const std::array<double, 3>& reference = radii[dts.size() - 1];
  for (std::size_t i = 0; i < r.rows.size(); ++i)
    r.rows[i][14] = lagrangian_error(radii[i], reference);
  compare(r);
  compare_lagrangian(r, dts.size() - 1);
  r.notes.push_back(
      "Ratios adaptive/fixed (last two columns): the fixed runs' cost at the adaptive run's "
      "|ΔE/E| is interpolated in log-log between the two fixed runs around it on the fixed runs' "
      "cost-error front; an adaptive run less accurate than the cheapest fixed run is compared "
      "with that run (no extrapolation); one more accurate than every fixed run has none.");
  r.notes.push_back(fmt::format(
      "{} N = {}, seed {}, softening {:g}, {}{}, t = 0 to {:g}; adaptive runs at dt = {:g} (the "
      "largest); |ΔE/E| at the end with the {} energy; wall time: a clock around the step loop "
      "(energies outside it); deepest_bin: the deepest bin populated at the end of any step, "
      "smallest_step = dt / 2^deepest_bin.",
      model, ps.size(), t.seed, g.softening, a.gravity,
      tree ? fmt::format(" theta {:g}", g.theta) : "", t_end, dts.front(), to_string(energy)));
  r.notes.push_back(
      fmt::format("Machine: nbody {}, {}, {} OpenMP threads, CPU {}{}.", info.version,
                  info.compiler, info.max_threads, info.cpu_model,
                  r.meta["gpu"].is_string() ? ", GPU " + r.meta["gpu"].get<std::string>() : ""));
  r.notes.push_back(fmt::format("Command: `{}`", command));
  // The time to solution by each measure: the energy error, and the structure (the
  // Lagrangian radii against the finest fixed run's, which itself has none and is left out).
  for (const auto& [file, y, ylabel] :
       {std::array<std::string, 3>{"timestep.png", "energy_error", "|ΔE/E| at the end"},
        std::array<std::string, 3>{"timestep_lagrangian.png", "lagrangian_error",
                                   "Lagrangian radii (10/50/90 %): largest relative error"}}) {
    r.plots.push_back({{"file", file},
                       {"kind", "line"},
                       {"x", json::array({"wall_seconds", "force_evaluations_per_body"})},
                       {"y", y},
                       {"group", json::array({"mode", "criterion"})},  // a line per criterion
                       {"labels", "label"},
                       {"logx", true},
                       {"logy", true},
                       {"xlabel", json::array({"wall seconds", "force evaluations per body"})},
                       {"ylabel", ylabel},
                       {"title", fmt::format("Fixed and adaptive steps, {} N = {} to t = {:g}",
                                             model, ps.size(), t_end)}});
  }
  return r;
}

}  // namespace nbody::cli::bench
