// The report suites of `nbody bench` (issue 7): scaling, block-size, threads, phases, theta,
// speedup (collisions is in bench_collisions.cpp). Each measures whole simulation steps
// (leapfrog, resident on the GPU) after a warm-up step, repeated for a time budget, and
// keeps the median; sizes whose predicted step time passes a cap are skipped (and say so).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/bench/bench_common.hpp"
#include "cli/bench/suite_report.hpp"
#include "cli/trajectory_errors.hpp"
#include "nbody/build_info.hpp"
#include "nbody/error.hpp"
#include "nbody/force_error.hpp"
#include "nbody/gravity.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/simulation.hpp"

namespace nbody::cli::bench {

namespace {

using Clock = std::chrono::steady_clock;
using json = nlohmann::ordered_json;

constexpr double kDt = 1e-3;
constexpr double kSoftening = 0.01;

/// Time budget per configuration and the largest step time worth measuring.
struct Budget {
  double per_config;
  double step_cap;
};
Budget budget(const BenchArgs& a) { return a.quick ? Budget{0.05, 0.25} : Budget{0.4, 4.0}; }

ParticleSystem plummer(std::size_t n) {
  ModelOptions m;
  m.n = n;
  m.seed = 42;
  return generate(m);
}

GravityOptions solver_options(const std::string& device, GravityAlgorithm algorithm,
                              ForceKernel kernel = ForceKernel::Fast, int threads = 0, int block = 0) {
  GravityOptions g;
  g.device = device == "gpu" ? Device::Gpu : Device::Cpu;
  g.algorithm = algorithm;
  g.kernel = kernel;
  g.precision = Precision::Float;  // the seeds' precision, on every device
  g.softening = kSoftening;
  g.theta = 0.5;
  g.threads = threads;
  g.block_size = block;
  return g;
}

/// Median seconds per leapfrog step of a simulation after one warm-up step.
double step_seconds(Simulation& sim, double per_config) {
  sim.step(kDt);
  std::vector<double> samples;
  const auto start = Clock::now();
  while (samples.size() < 3 ||
         (std::chrono::duration<double>(Clock::now() - start).count() < per_config && samples.size() < 200)) {
    const auto t0 = Clock::now();
    sim.step(kDt);
    samples.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return median_of(samples);
}

double step_seconds(const ParticleSystem& ps, const GravityOptions& g, double per_config) {
  Simulation sim(ps, g, IntegratorOptions{});
  return step_seconds(sim, per_config);
}

/// A solver measured against N: skips N once the step time predicted from the last
/// measured size (cost ~ N^exponent) passes the cap.
struct Series {
  std::string label, device;
  GravityOptions options;
  double exponent;
  std::optional<std::pair<std::size_t, double>> last;  // N, seconds
  bool predicted_too_slow(std::size_t n, double cap) const {
    return last && last->second * std::pow(double(n) / double(last->first), exponent) > cap;
  }
};

std::vector<std::size_t> scaling_sizes(const BenchArgs& a) {
  if (a.quick) return {256, 1024, 4096};
  return {1024, 4096, 16384, 65536, 100000, 262144, 500000, 1048576};
}

json plot(const std::string& file, const std::string& kind, const std::string& x, const json& y,
          const std::string& group, const std::string& title, const std::string& xlabel, const std::string& ylabel,
          bool logx = false, bool logy = false) {
  json p = {{"file", file}, {"kind", kind}, {"x", x}, {"y", y}, {"group", group}, {"title", title},
            {"xlabel", xlabel}, {"ylabel", ylabel}, {"logx", logx}, {"logy", logy}};
  return p;
}

}  // namespace

SuiteResult scaling_suite(const BenchArgs& a) {
  const Budget b = budget(a);
  SuiteResult r;
  r.suite = "scaling";
  r.title = "Steps per second against N, every solver";
  r.meta = base_meta(a);
  r.meta["precision"] = "float";
  r.meta["theta"] = 0.5;
  r.meta["softening"] = kSoftening;
  r.meta["model"] = "plummer";
  r.columns = {"solver", "device", "n", "seconds_per_step", "steps_per_second"};
  std::vector<Series> series;
  for (const std::string& d : bench_devices(a)) {
    if (d == "cpu") {
      series.push_back(
          {"cpu direct scalar", d, solver_options(d, GravityAlgorithm::Direct, ForceKernel::Scalar), 2.0, {}});
      series.push_back({"cpu direct simd", d, solver_options(d, GravityAlgorithm::Direct, ForceKernel::Fast), 2.0, {}});
      series.push_back({"cpu tree", d, solver_options(d, GravityAlgorithm::Tree), 1.15, {}});
    } else {
      for (const ForceKernel k : {ForceKernel::Naive, ForceKernel::Tiled, ForceKernel::Fast}) {
        series.push_back(
            {fmt::format("gpu direct {}", to_string(k)), d, solver_options(d, GravityAlgorithm::Direct, k), 2.0, {}});
      }
      series.push_back({"gpu tree", d, solver_options(d, GravityAlgorithm::Tree), 1.15, {}});
    }
  }
  std::vector<std::string> skipped;
  for (const std::size_t n : scaling_sizes(a)) {
    const ParticleSystem ps = plummer(n);
    for (Series& s : series) {
      if (s.predicted_too_slow(n, b.step_cap)) {
        skipped.push_back(fmt::format("{} at N = {}", s.label, n));
        continue;
      }
      const double t = step_seconds(ps, s.options, b.per_config);
      s.last = {{n, t}};
      r.add_row({s.label, s.device, n, t, 1.0 / t});
    }
  }
  // Where the tree overtakes the direct sum, per device: the smallest N from which the
  // tree is faster than every direct solver of that device.
  for (const std::string& d : bench_devices(a)) {
    std::map<std::size_t, double> tree, direct;
    for (const auto& row : r.rows) {
      if (row[1] != d) continue;
      const auto n = row[2].get<std::size_t>();
      const double sps = row[4].get<double>();
      if (row[0].get<std::string>().find("tree") != std::string::npos) {
        tree[n] = sps;
      } else {
        direct[n] = std::max(direct[n], sps);
      }
    }
    std::optional<std::size_t> from;
    for (const auto& [n, sps] : tree) {
      const bool faster = !direct.count(n) || sps > direct[n];
      if (faster && !from) from = n;
      if (!faster) from.reset();
    }
    r.notes.push_back(from ? fmt::format("{}: the tree overtakes the direct sum from N = {} (theta 0.5, float).", d,
                                         *from)
                           : fmt::format("{}: the tree does not overtake the direct sum at the sizes measured.", d));
  }
  if (!skipped.empty()) {
    r.notes.push_back(fmt::format("Skipped (predicted over {:g} s per step): {}.", b.step_cap, fmt::join(skipped, "; ")));
  }
  r.plots.push_back(plot("scaling.png", "line", "n", "steps_per_second", "solver", "Steps per second against N", "N (bodies)",
                         "steps per second", true, true));
  return r;
}

SuiteResult block_size_suite(const BenchArgs& a) {
  const Budget b = budget(a);
  SuiteResult r;
  r.suite = "block-size";
  r.title = "GPU steps per second against threads per block (seed 002)";
  r.meta = base_meta(a);
  const std::size_t n = a.quick ? 4096 : kSweepBlockN;
  r.meta["n"] = n;
  r.meta["precision"] = "float";
  r.meta["softening"] = kSoftening;
  r.columns = {"kernel", "block_size", "n", "steps_per_second"};
  const std::vector<std::string> devices = bench_devices(a);
  if (std::find(devices.begin(), devices.end(), "gpu") == devices.end()) {
    r.notes.push_back("No usable GPU: nothing measured.");
    return r;
  }
  const ParticleSystem ps = plummer(n);
  for (const ForceKernel k : {ForceKernel::Naive, ForceKernel::Tiled, ForceKernel::Fast}) {
    for (int block = 8; block <= 1024; block *= 2) {
      const double t = step_seconds(ps, solver_options("gpu", GravityAlgorithm::Direct, k, 0, block), b.per_config);
      r.add_row({std::string(to_string(k)), block, n, 1.0 / t});
    }
  }
  r.notes.push_back("An explicit block size runs the fast kernel's one-sided form (the each-pair-once form used by "
                    "default from N = 16384 has a fixed block).");
  r.plots.push_back(plot("block-size.png", "line", "block_size", "steps_per_second", "kernel",
                         fmt::format("GPU direct sum, N = {}", n), "threads per block", "steps per second", true, false));
  return r;
}

SuiteResult threads_suite(const BenchArgs& a) {
  const Budget b = budget(a);
  SuiteResult r;
  r.suite = "threads";
  r.title = "CPU steps per second against threads (seed 001 fig. 7.13)";
  r.meta = base_meta(a);
  r.meta["precision"] = "float";
  r.meta["theta"] = 0.5;
  r.meta["softening"] = kSoftening;
  r.columns = {"solver", "n", "threads", "steps_per_second", "speedup"};
  const int max_threads = build_info().max_threads;
  std::vector<int> counts;
  for (int t = 1; t < max_threads; t *= 2) counts.push_back(t);
  counts.push_back(max_threads);
  const std::size_t n_direct = a.quick ? 2048 : 16384, n_tree = a.quick ? 10000 : 100000;
  for (const auto& [label, algorithm, n] : {std::tuple{"cpu direct simd", GravityAlgorithm::Direct, n_direct},
                                            std::tuple{"cpu tree", GravityAlgorithm::Tree, n_tree}}) {
    const ParticleSystem ps = plummer(n);
    double one = 0;
    for (int t : counts) {
      const double s = step_seconds(ps, solver_options("cpu", algorithm, ForceKernel::Fast, t), b.per_config);
      if (t == 1) one = s;
      r.add_row({label, n, t, 1.0 / s, one / s});
    }
  }
  r.plots.push_back(plot("threads.png", "line", "threads", "steps_per_second", "solver", "CPU scaling with threads",
                         "threads", "steps per second", true, true));
  return r;
}

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
  r.meta["softening"] = kSoftening;
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
      Simulation sim(ps, solver_options(d, algorithm), IntegratorOptions{}, c);
      sim.step(kDt);
      sim.times() = PhaseTimes{};
      sim.gravity_stages() = PhaseTimes{};
      const auto start = Clock::now();
      std::uint64_t steps = 0;
      while (steps < 3 || (std::chrono::duration<double>(Clock::now() - start).count() < b.per_config && steps < 100)) {
        sim.step(kDt);
        ++steps;
      }
      const std::string config = fmt::format("{} {}", d, to_string(algorithm));
      const PhaseTimes& t = sim.times();
      const double step = (t.get("gravity") + t.get("collisions") + t.get("integrate")) / double(steps);
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
  r.notes.push_back("GPU tree stages are CUDA-event times; 'gravity other' is packing and transfers around them; "
                    "collisions: bounce, radius 0.002, 2 passes.");
  r.plots.push_back(plot("phases.png", "stacked_bar", "config", "ms_per_step", "stage",
                         fmt::format("Time per stage, Plummer N = {}", n), "", "ms per step"));
  r.plots.push_back(plot("phases-share.png", "stacked_bar", "config", "share", "stage",
                         fmt::format("Share of the step per stage, Plummer N = {}", n), "", "share of the step"));
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
  r.meta["softening"] = kSoftening;
  r.columns = {"device", "theta", "ms_per_step", "interactions_per_body", "error_median", "error_p99",
               "sum_dx2_20_steps", "sum_dv2_20_steps"};
  const ParticleSystem ps = plummer(n);
  const std::vector<std::size_t> sample = sample_indices(n, a.quick ? 200 : 500, 1);
  ParticleSystem exact = ps;
  direct_accelerations_for(ps, sample, 1.0, kSoftening, exact);
  // Seed 003's trajectory test: bodies in a box of +-1024, masses 0.1-100, at rest, 20 steps.
  ModelOptions cube;
  cube.model = "uniform-cube";
  cube.n = n_traj;
  cube.seed = 3;
  cube.size = 1024;
  ParticleSystem box = generate(cube);
  for (std::size_t i = 0; i < box.size(); ++i) box.mass[i] = 0.1 + 99.9 * double((i * 2654435761u) % 1000) / 999.0;
  const std::vector<double> thetas =
      a.quick ? std::vector<double>{0.3, 0.6, 0.9} : std::vector<double>{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0};
  for (const std::string& d : bench_devices(a)) {
    for (const double theta : thetas) {
      GravityOptions g = solver_options(d, GravityAlgorithm::Tree);
      g.theta = theta;
      const double t = step_seconds(ps, g, b.per_config);
      auto solver = make_gravity_solver(g);
      ParticleSystem approx = ps;
      solver->compute_accelerations(approx);
      const ForceErrorStats e = summarize_errors(relative_force_errors(approx, exact, sample));
      GravityOptions gt = g;
      gt.softening = 1.0;  // the box test's units
      const auto [dx2, dv2] = trajectory_errors(box, gt, 20, 1.0);
      r.add_row({d, theta, 1e3 * t, solver->stats().interactions_per_body, e.median, e.p99, dx2, dv2});
    }
  }
  r.notes.push_back(fmt::format("Errors against the float64 direct sum on {} sampled bodies; the 20-step sums over {} "
                                "bodies in a +-1024 box, masses 0.1-100, at rest, dt = 1, softening 1, against "
                                "theta = 0.",
                                sample.size(), n_traj));
  r.plots.push_back(plot("theta-time.png", "line", "theta", "ms_per_step", "device", "Time per step against theta",
                         "theta", "ms per step", false, true));
  r.plots.push_back(plot("theta-error.png", "line", "theta", json::array({"error_median", "error_p99"}), "device",
                         "Relative force error against theta", "theta", "relative force error", false, true));
  r.plots.push_back(plot("theta-trajectory.png", "line", "theta", json::array({"sum_dx2_20_steps", "sum_dv2_20_steps"}),
                         "device", "Seed 003: 20-step drift from the theta = 0 run", "theta", "sum of squares", false,
                         true));
  return r;
}

SuiteResult speedup_suite(const BenchArgs& a) {
  const Budget b = budget(a);
  SuiteResult r;
  r.suite = "speedup";
  r.title = "GPU against one CPU thread, same algorithm (seed 003 fig. 6, seed 000 fig. 3.5)";
  r.meta = base_meta(a);
  r.meta["precision"] = "float";
  r.meta["theta"] = 0.5;
  r.meta["softening"] = kSoftening;
  r.columns = {"algorithm", "n", "cpu_1_thread_seconds", "gpu_seconds", "speedup"};
  const std::vector<std::string> devices = bench_devices(a);
  if (std::find(devices.begin(), devices.end(), "gpu") == devices.end()) {
    r.notes.push_back("No usable GPU: nothing measured.");
    return r;
  }
  const std::vector<std::size_t> sizes =
      a.quick ? std::vector<std::size_t>{1024, 4096} : std::vector<std::size_t>{4096, 16384, 65536, 262144, 1048576};
  for (const auto& [algorithm, exponent] :
       {std::pair{GravityAlgorithm::Direct, 2.0}, std::pair{GravityAlgorithm::Tree, 1.15}}) {
    const std::string name(to_string(algorithm));
    Series cpu{name, "cpu", solver_options("cpu", algorithm, ForceKernel::Fast, 1), exponent, {}};
    for (const std::size_t n : sizes) {
      const ParticleSystem ps = plummer(n);
      const double g = step_seconds(ps, solver_options("gpu", algorithm), b.per_config);
      json c = nullptr, s = nullptr;
      if (!cpu.predicted_too_slow(n, 4 * b.step_cap)) {
        const double t = step_seconds(ps, cpu.options, b.per_config);
        cpu.last = {{n, t}};
        c = t;
        s = t / g;
      }
      r.add_row({name, n, c, g, s});
    }
  }
  r.notes.push_back("CPU times of sizes predicted over the cap are left out (null).");
  r.plots.push_back(plot("speedup.png", "line", "n", "speedup", "algorithm", "GPU speed-up over one CPU thread",
                         "N (bodies)", "speed-up", true, true));
  return r;
}

}  // namespace nbody::cli::bench
