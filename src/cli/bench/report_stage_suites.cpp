// The report suites of `nbody bench` that split a step: phases (time per stage against N)
// and theta (tree accuracy and time against the opening angle).
#include "cli/bench/report_suite_helpers.hpp"

namespace nbody::cli::bench {

using namespace report;  // NOLINT: the suites' shared helpers

SuiteResult phases_suite(const BenchArgs& a) {
  const Budget b = budget(a);
  SuiteResult r;
  r.suite = "phases";
  r.title = "Time per stage of a step (seed 000 table 3.2, seed 003 figs. 7-8, seed 001 fig. 7.15)";
  r.meta = base_meta(a);
  const std::size_t n = a.quick ? 20000 : 150000;
  r.meta["n"] = n;
  r.meta["precision"] = "float";
  r.meta["theta"] = 0.5;
  r.meta["softening"] = softening_or(a, kSoftening);
  r.columns = {"config", "stage", "ms_per_step", "share"};
  ParticleSystem ps = plummer(n);
  for (double& rad : ps.radius) rad = 2e-3;  // a few contacts in the core
  CollisionOptions c;
  c.model = CollisionModel::Bounce;
  c.iterations = 2;
  for (const std::string& d : bench_devices(a)) {
    for (const GravityAlgorithm algorithm : {GravityAlgorithm::Tree, GravityAlgorithm::Direct}) {
      // O(N^2) on the host: seconds per step
      if (algorithm == GravityAlgorithm::Direct && d == "cpu" && n > 50000) continue;
      Simulation sim(ps, solver_options(a, d, algorithm), IntegratorOptions{}, c);
      const std::uint64_t steps = timed_steps(sim, b.per_config, 100);
      const std::string config = fmt::format("{} {}", d, to_string(algorithm));
      const PhaseTimes& t = sim.times();
      const double step =
          (t.get("gravity") + t.get("collisions") + t.get("integrate")) / double(steps);
      auto add = [&](const std::string& stage, double seconds) {
        if (seconds <= 0) return;
        r.add_row({config, stage, 1e3 * seconds / double(steps), seconds / double(steps) / step});
      };
      double staged = 0;
      for (const auto& [stage, seconds] : sim.gravity_stages().entries()) {
        add(stage, seconds);
        staged += seconds;
      }
      add(staged > 0 ? "gravity other" : "force", t.get("gravity") - staged);
      add("collisions", t.get("collisions"));
      add("integrate", t.get("integrate"));
    }
  }
  r.notes.push_back(
      "GPU tree stages are CUDA-event times; 'gravity other' is packing and transfers around them; "
      "collisions: bounce, radius 0.002, 2 passes.");
  r.plots.push_back(plot("phases.png", "stacked_bar", "config", "ms_per_step", "stage",
                         fmt::format("Time per stage, Plummer N = {}", n), "", "ms per step"));
  r.plots.push_back(plot("phases-share.png", "stacked_bar", "config", "share", "stage",
                         fmt::format("Share of the step per stage, Plummer N = {}", n), "",
                         "share of the step"));
  return r;
}

SuiteResult theta_suite(const BenchArgs& a) {
  const Budget b = budget(a);
  SuiteResult r;
  r.suite = "theta";
  r.title = "Time and force error against the opening angle (seed 003 figs. 12-17)";
  r.meta = base_meta(a);
  const std::size_t n = a.quick ? 5000 : 100000, n_traj = a.quick ? 300 : 2000;
  r.meta["n"] = n;
  r.meta["precision"] = "float";
  r.meta["softening"] = softening_or(a, kSoftening);
  r.columns = {"device",       "theta",     "ms_per_step",      "interactions_per_body",
               "error_median", "error_p99", "sum_dx2_20_steps", "sum_dv2_20_steps"};
  const ParticleSystem ps = plummer(n);
  const std::vector<std::size_t> sample = sample_indices(n, a.quick ? 200 : 500, 1);
  ParticleSystem exact = ps;
  direct_accelerations_for(ps, sample, 1.0, softening_or(a, kSoftening), exact);
  // Seed 003's trajectory test: bodies in a box of +-1024, masses 0.1-100, at rest, 20 steps.
  ModelOptions cube;
  cube.model = "uniform-cube";
  cube.n = n_traj;
  cube.seed = 3;
  cube.size = 1024;
  ParticleSystem box = generate(cube);
  for (std::size_t i = 0; i < box.size(); ++i)
    box.mass[i] = 0.1 + 99.9 * double((i * 2654435761u) % 1000) / 999.0;
  const std::vector<double> thetas =
      a.quick ? std::vector<double>{0.3, 0.6, 0.9}
              : std::vector<double>{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0};
  for (const std::string& d : bench_devices(a)) {
    for (const double theta : thetas) {
      GravityOptions g = solver_options(a, d, GravityAlgorithm::Tree);
      g.theta = theta;
      const double t = step_seconds(ps, g, b.per_config);
      auto solver = make_gravity_solver(g);
      ParticleSystem approx = ps;
      solver->compute_accelerations(approx);
      const ForceErrorStats e = summarize_errors(relative_force_errors(approx, exact, sample));
      GravityOptions gt = g;
      gt.softening = 1.0;  // the box test's units
      const auto [dx2, dv2] = trajectory_errors(box, gt, 20, 1.0);
      r.add_row(
          {d, theta, 1e3 * t, solver->stats().interactions_per_body, e.median, e.p99, dx2, dv2});
    }
  }
  r.notes.push_back(fmt::format(
      "Errors against the float64 direct sum on {} sampled bodies; the 20-step sums over {} "
      "bodies in a +-1024 box, masses 0.1-100, at rest, dt = 1, softening 1, against "
      "theta = 0.",
      sample.size(), n_traj));
  r.plots.push_back(plot("theta-time.png", "line", "theta", "ms_per_step", "device",
                         "Time per step against theta", "theta", "ms per step", false, true));
  r.plots.push_back(
      plot("theta-error.png", "line", "theta", json::array({"error_median", "error_p99"}), "device",
           "Relative force error against theta", "theta", "relative force error", false, true));
  r.plots.push_back(plot("theta-trajectory.png", "line", "theta",
                         json::array({"sum_dx2_20_steps", "sum_dv2_20_steps"}), "device",
                         "Seed 003: 20-step drift from the theta = 0 run", "theta",
                         "sum of squares", false, true));
  return r;
}

}  // namespace nbody::cli::bench
