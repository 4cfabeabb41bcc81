// nbody bench SUITE: built-in benchmarks. `direct` times the CPU direct sum and prints
// pairwise interactions per second (per core, too); `tree` times the Barnes-Hut solver on a
// Plummer sphere against the direct sum for the same N. Later suites plug in here.
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
  std::size_t n = 16384;  // direct; tree defaults to kTreeDefaultN unless -n is given
  double seconds = 1.0;  // time per configuration
  int threads = 0;       // 0: 1 thread and all threads
  std::vector<std::string> kernels{"fast", "scalar"};
  bool json = false;
  double theta = 0.5;                // tree only
  bool quadrupole = false;           // tree only
  std::string precision = "auto";  // tree only (direct times both); auto = float for the tree
};

constexpr std::size_t kTreeDefaultN = 100000;
constexpr double kBenchSoftening = 0.01;
// bench tree: the direct sum is measured up to this N, above it timed at kDirectProbeN and
// scaled by N^2 (at 100k bodies each direct evaluation takes seconds, and the timing repeats it).
constexpr std::size_t kDirectMeasuredMaxN = 30000;
constexpr std::size_t kDirectProbeN = 16384;

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
        g.softening = kBenchSoftening;
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

/// Median of `values` (reorders them).
double median_of(std::vector<double> values) {
  std::nth_element(values.begin(), values.begin() + std::ptrdiff_t(values.size() / 2), values.end());
  return values[values.size() / 2];
}

void bench_tree(const BenchArgs& a) {
  std::FILE* human = a.json ? stderr : stdout;
  const BuildInfo info = build_info();
  GravityOptions g;
  g.algorithm = "tree";
  g.theta = a.theta;
  g.quadrupole = a.quadrupole;
  // Resolved once, so the direct sum it is compared with runs at the same precision.
  g.precision = resolve_precision(a.precision == "float"    ? Precision::Float
                                  : a.precision == "double" ? Precision::Double
                                                            : Precision::Auto,
                                  "tree");
  const std::string precision(to_string(g.precision));
  g.threads = a.threads;
  g.softening = kBenchSoftening;
  auto tree = make_gravity_solver(g);  // before the set-up work: fails fast when unavailable
  ModelOptions model;  // Plummer: the centrally concentrated case a tree is built for
  model.n = a.n;
  model.seed = 42;
  ParticleSystem ps = generate(model);
  const int threads = a.threads > 0 ? a.threads : info.max_threads;
  fmt::print(human, "tree (Barnes-Hut), Plummer N = {}, precision {}, theta = {:g}, {}, softening = {:g}\n", a.n,
             precision, a.theta, a.quadrupole ? "quadrupole" : "monopole", kBenchSoftening);
  fmt::print(human, "device: cpu, CPU: {}, {} threads\n", info.cpu_model, threads);
  std::fflush(human);

  // Like time_evaluations, but keeping each evaluation's build/walk split and interaction
  // count; each is reported as its median over the evaluations.
  using Clock = std::chrono::steady_clock;
  tree->compute_accelerations(ps);  // warm-up
  std::vector<double> total, build, walk, interactions;
  const auto start = Clock::now();
  while (total.size() < 3 || (std::chrono::duration<double>(Clock::now() - start).count() < a.seconds &&
                              total.size() < 1000)) {
    const auto t0 = Clock::now();
    tree->compute_accelerations(ps);
    total.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    const SolverStats st = tree->stats();
    build.push_back(st.build_seconds);
    walk.push_back(st.walk_seconds);
    interactions.push_back(st.interactions_per_body);
  }
  const double seconds = median_of(total);
  const double build_s = median_of(build), walk_s = median_of(walk), per_body = median_of(interactions);

  // The direct sum at the same precision and threads, for the speed-up.
  GravityOptions d = g;
  d.algorithm = "direct";
  auto direct = make_gravity_solver(d);
  const bool measured = a.n <= kDirectMeasuredMaxN;
  double direct_seconds = 0;
  if (measured) {
    direct_seconds = time_evaluations(*direct, ps, a.seconds);
  } else {
    model.n = kDirectProbeN;
    ParticleSystem probe = generate(model);
    const double scale = double(a.n) / double(kDirectProbeN);
    direct_seconds = time_evaluations(*direct, probe, a.seconds) * scale * scale;
  }
  const std::string how = measured ? "measured" : fmt::format("estimated: N = {} timed, scaled by N^2", kDirectProbeN);

  fmt::print(human, "{:<28} {:>12} {:>12} {:>12} {:>18}\n", "solver", "ms/eval", "build ms", "walk ms",
             "interactions/body");
  fmt::print(human, "{:<28} {:>12.3f} {:>12.3f} {:>12.3f} {:>18.1f}\n", tree->name(), 1e3 * seconds, 1e3 * build_s,
             1e3 * walk_s, per_body);
  fmt::print(human, "{:<28} {:>12.3f}   ({})\n", direct->name(), 1e3 * direct_seconds, how);
  fmt::print(human, "speed-up over the direct sum: {:.3g}x ({} tree evaluations, median)\n", direct_seconds / seconds,
             total.size());
  if (a.json) {
    const nlohmann::ordered_json j = {{"suite", "tree"},
                                      {"n", a.n},
                                      {"device", "cpu"},
                                      {"cpu", info.cpu_model},
                                      {"threads", threads},
                                      {"precision", precision},
                                      {"theta", a.theta},
                                      {"quadrupole", a.quadrupole},
                                      {"softening", kBenchSoftening},
                                      {"solver", tree->name()},
                                      {"evaluations", total.size()},
                                      {"seconds_per_eval", seconds},
                                      {"build_seconds", build_s},
                                      {"walk_seconds", walk_s},
                                      {"interactions_per_body", per_body},
                                      {"direct_solver", direct->name()},
                                      {"direct_seconds_per_eval", direct_seconds},
                                      {"direct_measured", measured},
                                      {"speedup", direct_seconds / seconds}};
    fmt::print("{}\n", j.dump(2));
  }
}
}  // namespace

void add_bench_command(CLI::App& app) {
  auto args = std::make_shared<BenchArgs>();
  auto* cmd = app.add_subcommand("bench", "Built-in benchmarks");
  cmd->add_option("suite", args->suite,
                  "Benchmark suite: direct (CPU direct sum, interactions per second) or tree (Barnes-Hut on a "
                  "Plummer sphere, against the direct sum)")
      ->required()
      ->check(CLI::IsMember({"direct", "tree"}));
  auto* count = cmd->add_option("-n,--count", args->n, "Number of bodies (tree: default 100000)")
                    ->check(CLI::PositiveNumber)
                    ->capture_default_str();
  cmd->add_option("--seconds", args->seconds, "Time spent on each configuration")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--threads", args->threads, "Threads (direct: 0 = one thread, then all; tree: 0 = all)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--kernel", args->kernels, "Kernels to time")->check(CLI::IsMember(cpu_direct_kernels()));
  cmd->add_option("--theta", args->theta, "tree: opening angle")->check(CLI::NonNegativeNumber)->capture_default_str();
  cmd->add_flag("--quadrupole", args->quadrupole, "tree: add quadrupole moments");
  cmd->add_option("--precision", args->precision,
                  "tree: force arithmetic, float, double or auto (float for the tree)")
      ->check(CLI::IsMember({"auto", "float", "double"}))
      ->capture_default_str();
  cmd->add_flag("--json", args->json, "Print one JSON object with the results on stdout");
  cmd->callback([args, count] {
    if (args->suite == "tree") {
      if (count->count() == 0) args->n = kTreeDefaultN;
      bench_tree(*args);
    } else {
      bench_direct(*args);
    }
  });
}

}  // namespace nbody::cli
