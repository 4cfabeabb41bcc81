// nbody bench SUITE: built-in benchmarks. `direct` times the CPU direct sum and prints
// pairwise interactions per second (per core, too). Later suites plug in here.
#include <algorithm>
#include <chrono>
#include <memory>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "nbody/build_info.hpp"
#include "nbody/error.hpp"
#include "nbody/gravity.hpp"
#include "nbody/initial_conditions.hpp"

namespace nbody::cli {

namespace {
struct BenchArgs {
  std::string suite;
  std::size_t n = 16384;
  double seconds = 1.0;  // time per configuration
  int threads = 0;       // 0: 1 thread and all threads
  std::vector<std::string> kernels{"fast", "scalar"};
  bool json = false;
};

struct DirectResult {
  std::string solver;
  std::string precision;
  int threads;
  double seconds_per_eval;
  double interactions_per_second;
};

/// Median seconds of one force evaluation, repeated for about `budget` seconds.
double time_evaluations(GravitySolver& solver, ParticleSystem& ps, double budget) {
  using Clock = std::chrono::steady_clock;
  solver.compute_accelerations(ps);  // warm-up: page in scratch buffers, spin up threads
  std::vector<double> samples;
  const auto start = Clock::now();
  while (samples.size() < 3 || (std::chrono::duration<double>(Clock::now() - start).count() < budget &&
                                samples.size() < 1000)) {
    const auto t0 = Clock::now();
    solver.compute_accelerations(ps);
    samples.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  std::nth_element(samples.begin(), samples.begin() + std::ptrdiff_t(samples.size() / 2), samples.end());
  return samples[samples.size() / 2];
}

void bench_direct(const BenchArgs& a) {
  std::FILE* human = a.json ? stderr : stdout;
  const BuildInfo info = build_info();
  ModelOptions model;
  model.model = "uniform-cube";
  model.n = a.n;
  model.seed = 42;
  ParticleSystem ps = generate(model);
  std::vector<int> thread_counts = a.threads > 0 ? std::vector<int>{a.threads} : std::vector<int>{1};
  if (a.threads == 0 && info.max_threads > 1) thread_counts.push_back(info.max_threads);

  fmt::print(human, "direct sum, N = {}, CPU: {}, {} threads available\n", a.n, info.cpu_model, info.max_threads);
  fmt::print(human, "{:<28} {:>9} {:>8} {:>12} {:>16} {:>16}\n", "solver", "precision", "threads", "ms/eval",
             "interactions/s", "per core");
  std::vector<DirectResult> results;
  // Threads outermost: after a parallel region OpenMP's idle workers spin for a while, and
  // on machines whose cores share a physical core that slows a following 1-thread run.
  for (int t : thread_counts) {
    for (const auto& kernel : a.kernels) {
      for (Precision p : {Precision::Float, Precision::Double}) {
        GravityOptions g;
        g.kernel = kernel;
        g.precision = p;
        g.threads = t;
        g.softening = 0.01;
        auto solver = make_gravity_solver(g);
        if (kernel == "scalar" && t > 1) continue;  // the reference is single-threaded
        const double s = time_evaluations(*solver, ps, a.seconds);
        const double rate = double(a.n) * double(a.n) / s;
        results.push_back({solver->name(), std::string(to_string(p)), t, s, rate});
        fmt::print(human, "{:<28} {:>9} {:>8} {:>12.3f} {:>16.3e} {:>16.3e}\n", solver->name(), to_string(p), t,
                   1e3 * s, rate, rate / t);
        std::fflush(human);
      }
    }
  }
  if (a.json) {
    nlohmann::ordered_json j = {{"suite", "direct"}, {"n", a.n}, {"cpu", info.cpu_model}, {"results", nlohmann::ordered_json::array()}};
    for (const auto& r : results) {
      j["results"].push_back({{"solver", r.solver},
                              {"precision", r.precision},
                              {"threads", r.threads},
                              {"seconds_per_eval", r.seconds_per_eval},
                              {"interactions_per_second", r.interactions_per_second},
                              {"interactions_per_second_per_core", r.interactions_per_second / r.threads}});
    }
    fmt::print("{}\n", j.dump(2));
  }
}
}  // namespace

void add_bench_command(CLI::App& app) {
  auto args = std::make_shared<BenchArgs>();
  auto* cmd = app.add_subcommand("bench", "Built-in benchmarks");
  cmd->add_option("suite", args->suite, "Benchmark suite: direct (CPU direct sum, interactions per second)")
      ->required()
      ->check(CLI::IsMember({"direct"}));
  cmd->add_option("-n,--count", args->n, "Number of bodies")->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--seconds", args->seconds, "Time spent on each configuration")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--threads", args->threads, "Threads (0: one thread, then all)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--kernel", args->kernels, "Kernels to time")->check(CLI::IsMember(cpu_direct_kernels()));
  cmd->add_flag("--json", args->json, "Print one JSON object with the results on stdout");
  cmd->callback([args] { bench_direct(*args); });
}

}  // namespace nbody::cli
