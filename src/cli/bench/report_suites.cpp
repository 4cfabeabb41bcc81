// The report suites of `nbody bench`: scaling, block-size, threads and speedup (phases and
// theta are in report_stage_suites.cpp, collisions in bench_collisions.cpp). Each measures whole
// simulation steps (leapfrog, resident on the GPU) after a warm-up step, repeated for a time
// budget, and keeps the median; sizes whose predicted step time passes a cap are skipped (and say
// so).
#include "cli/bench/report_suite_helpers.hpp"

namespace nbody::cli::bench {

using namespace report;  // NOLINT: the suites' shared helpers

SuiteResult scaling_suite(const BenchArgs& a) {
  const Budget b = budget(a);
  SuiteResult r;
  r.suite = "scaling";
  r.title = "Steps per second against N, every solver";
  r.meta = base_meta(a);
  r.meta["precision"] = "float";
  r.meta["theta"] = 0.5;
  r.meta["softening"] = softening_or(a, kSoftening);
  r.meta["model"] = "plummer";
  r.columns = {"solver", "device", "n", "seconds_per_step", "steps_per_second"};
  std::vector<Series> series;
  for (const std::string& d : bench_devices(a)) {
    if (d == "cpu") {
      series.push_back({"cpu direct scalar",
                        d,
                        solver_options(a, d, GravityAlgorithm::Direct, ForceKernel::Scalar),
                        2.0,
                        {}});
      series.push_back({"cpu direct simd",
                        d,
                        solver_options(a, d, GravityAlgorithm::Direct, ForceKernel::Fast),
                        2.0,
                        {}});
      series.push_back({"cpu tree", d, solver_options(a, d, GravityAlgorithm::Tree), 1.15, {}});
    } else {
      for (const ForceKernel k : {ForceKernel::Naive, ForceKernel::Tiled, ForceKernel::Fast}) {
        series.push_back({fmt::format("gpu direct {}", to_string(k)),
                          d,
                          solver_options(a, d, GravityAlgorithm::Direct, k),
                          2.0,
                          {}});
      }
      series.push_back({"gpu tree", d, solver_options(a, d, GravityAlgorithm::Tree), 1.15, {}});
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
    r.notes.push_back(
        from ? fmt::format("{}: the tree overtakes the direct sum from N = {} (theta 0.5, float).",
                           d, *from)
             : fmt::format("{}: the tree does not overtake the direct sum at the sizes measured.",
                           d));
  }
  if (!skipped.empty()) {
    r.notes.push_back(fmt::format("Skipped (predicted over {:g} s per step): {}.", b.step_cap,
                                  fmt::join(skipped, "; ")));
  }
  r.plots.push_back(plot("scaling.png", "line", "n", "steps_per_second", "solver",
                         "Steps per second against N", "N (bodies)", "steps per second", true,
                         true));
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
  r.meta["softening"] = softening_or(a, kSoftening);
  r.columns = {"kernel", "block_size", "n", "steps_per_second"};
  const std::vector<std::string> devices = bench_devices(a);
  if (std::find(devices.begin(), devices.end(), "gpu") == devices.end()) {
    r.notes.push_back("No usable GPU: nothing measured.");
    return r;
  }
  const ParticleSystem ps = plummer(n);
  for (const ForceKernel k : {ForceKernel::Naive, ForceKernel::Tiled, ForceKernel::Fast}) {
    for (int block = 8; block <= 1024; block *= 2) {
      const double t = step_seconds(
          ps, solver_options(a, "gpu", GravityAlgorithm::Direct, k, 0, block), b.per_config);
      r.add_row({std::string(to_string(k)), block, n, 1.0 / t});
    }
  }
  r.notes.push_back(
      "An explicit block size runs the fast kernel's one-sided form (the each-pair-once form used "
      "by "
      "default from N = 16384 has a fixed block).");
  r.plots.push_back(plot("block-size.png", "line", "block_size", "steps_per_second", "kernel",
                         fmt::format("GPU direct sum, N = {}", n), "threads per block",
                         "steps per second", true, false));
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
  r.meta["softening"] = softening_or(a, kSoftening);
  r.columns = {"solver", "n", "threads", "steps_per_second", "speedup"};
  const int max_threads = build_info().max_threads;
  std::vector<int> counts;
  for (int t = 1; t < max_threads; t *= 2) counts.push_back(t);
  counts.push_back(max_threads);
  const std::size_t n_direct = a.quick ? 2048 : 16384, n_tree = a.quick ? 10000 : 100000;
  for (const auto& [label, algorithm, n] :
       {std::tuple{"cpu direct simd", GravityAlgorithm::Direct, n_direct},
        std::tuple{"cpu tree", GravityAlgorithm::Tree, n_tree}}) {
    const ParticleSystem ps = plummer(n);
    double one = 0;
    for (int t : counts) {
      const double s =
          step_seconds(ps, solver_options(a, "cpu", algorithm, ForceKernel::Fast, t), b.per_config);
      if (t == 1) one = s;
      r.add_row({label, n, t, 1.0 / s, one / s});
    }
  }
  r.plots.push_back(plot("threads.png", "line", "threads", "steps_per_second", "solver",
                         "CPU scaling with threads", "threads", "steps per second", true, true));
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
  r.meta["softening"] = softening_or(a, kSoftening);
  r.columns = {"algorithm", "n", "cpu_1_thread_seconds", "gpu_seconds", "speedup"};
  const std::vector<std::string> devices = bench_devices(a);
  if (std::find(devices.begin(), devices.end(), "gpu") == devices.end()) {
    r.notes.push_back("No usable GPU: nothing measured.");
    return r;
  }
  const std::vector<std::size_t> sizes =
      a.quick ? std::vector<std::size_t>{1024, 4096}
              : std::vector<std::size_t>{4096, 16384, 65536, 262144, 1048576};
  for (const auto& [algorithm, exponent] :
       {std::pair{GravityAlgorithm::Direct, 2.0}, std::pair{GravityAlgorithm::Tree, 1.15}}) {
    const std::string name(to_string(algorithm));
    Series cpu{
        name, "cpu", solver_options(a, "cpu", algorithm, ForceKernel::Fast, 1), exponent, {}};
    for (const std::size_t n : sizes) {
      const ParticleSystem ps = plummer(n);
      const double g = step_seconds(ps, solver_options(a, "gpu", algorithm), b.per_config);
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
  r.plots.push_back(plot("speedup.png", "line", "n", "speedup", "algorithm",
                         "GPU speed-up over one CPU thread", "N (bodies)", "speed-up", true, true));
  return r;
}

}  // namespace nbody::cli::bench
