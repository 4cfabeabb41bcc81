// nbody bench SUITE: built-in benchmarks. `direct` times the CPU direct sum and prints
// pairwise interactions per second (per core, too); with --device gpu it times the CUDA
// kernels (whole evaluation and kernel alone), optionally sweeping block sizes and N;
// `tree` times the Barnes-Hut solver on a Plummer sphere against the direct sum for the
// same N. Later suites plug in here.
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
  std::string precision = "auto";  // tree, gpu direct (auto: both); auto = float for the tree
  std::string device = "cpu";      // direct: cpu or gpu
  int block_size = 0;              // gpu: threads per block (0 = kernel default)
  bool sweep_block_size = false;   // gpu: steps/s over block sizes (N = 16384) and over N
};

constexpr std::size_t kGpuDefaultN = 1048576;
constexpr std::size_t kSweepBlockN = 16384;

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

/// Median of `values` (reorders them).
double median_of(std::vector<double> values) {
  std::nth_element(values.begin(), values.begin() + std::ptrdiff_t(values.size() / 2), values.end());
  return values[values.size() / 2];
}

struct GpuTiming {
  double seconds = 0;         // median wall time of one compute_accelerations (upload + kernel + download)
  double kernel_seconds = 0;  // median kernel time (CUDA events, stats().walk_seconds)
  std::size_t samples = 0;
};

/// Like time_evaluations, also keeping the solver's kernel time. compute_accelerations
/// synchronises with the GPU before it returns, so wall time covers the whole evaluation.
GpuTiming time_gpu(GravitySolver& solver, ParticleSystem& ps, double budget) {
  using Clock = std::chrono::steady_clock;
  solver.compute_accelerations(ps);  // warm-up: allocations, module load, clocks up
  std::vector<double> wall, kernel;
  const auto start = Clock::now();
  while (wall.size() < 3 ||
         (std::chrono::duration<double>(Clock::now() - start).count() < budget && wall.size() < 1000)) {
    const auto t0 = Clock::now();
    solver.compute_accelerations(ps);
    wall.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    kernel.push_back(solver.stats().walk_seconds);
  }
  return {median_of(wall), median_of(kernel), wall.size()};
}

std::unique_ptr<GravitySolver> gpu_direct_solver(const std::string& kernel, Precision p, int block) {
  GravityOptions g;
  g.device = Device::Gpu;
  g.kernel = kernel;
  g.precision = p;
  g.block_size = block;
  g.softening = kBenchSoftening;
  return make_gravity_solver(g);
}

ParticleSystem bench_bodies(std::size_t n) {
  ModelOptions model;
  model.model = "uniform-cube";
  model.n = n;
  model.seed = 42;
  return generate(model);
}

void bench_direct_gpu(const BenchArgs& a, std::vector<std::string> kernels) {
  std::FILE* human = a.json ? stderr : stdout;
  if (kernels.empty()) kernels = {"naive", "tiled", "fast"};
  std::vector<Precision> precisions{Precision::Float, Precision::Double};
  if (a.precision == "float") precisions = {Precision::Float};
  if (a.precision == "double") precisions = {Precision::Double};
  for (const auto& k : kernels) (void)gpu_direct_solver(k, precisions.front(), a.block_size);  // fail fast
  const std::vector<GpuDevice> devices = gpu_devices();
  const std::string gpu = devices.empty() ? "?" : devices.front().name;
  const std::string block_text = a.block_size > 0 ? std::to_string(a.block_size) : "default";
  nlohmann::ordered_json j = {{"suite", "direct"}, {"device", "gpu"}, {"gpu", gpu}, {"softening", kBenchSoftening}};

  if (!a.sweep_block_size) {
    ParticleSystem ps = bench_bodies(a.n);
    fmt::print(human, "direct sum on the GPU, N = {}, GPU: {}, block size {}, softening {:g}\n", a.n, gpu, block_text,
               kBenchSoftening);
    fmt::print(human, "{:<28} {:>9} {:>12} {:>12} {:>16} {:>16}\n", "solver", "precision", "ms/eval", "kernel ms",
               "interactions/s", "kernel inter/s");
    j["n"] = a.n;
    j["block_size"] = a.block_size;
    j["results"] = nlohmann::ordered_json::array();
    for (Precision p : precisions) {
      for (const auto& k : kernels) {
        auto solver = gpu_direct_solver(k, p, a.block_size);
        const GpuTiming t = time_gpu(*solver, ps, a.seconds);
        const double pairs = double(a.n) * double(a.n);
        fmt::print(human, "{:<28} {:>9} {:>12.3f} {:>12.3f} {:>16.3e} {:>16.3e}\n", solver->name(), to_string(p),
                   1e3 * t.seconds, 1e3 * t.kernel_seconds, pairs / t.seconds, pairs / t.kernel_seconds);
        std::fflush(human);
        j["results"].push_back({{"solver", solver->name()},
                                {"kernel", k},
                                {"precision", to_string(p)},
                                {"seconds_per_eval", t.seconds},
                                {"kernel_seconds", t.kernel_seconds},
                                {"interactions_per_second", pairs / t.seconds},
                                {"kernel_interactions_per_second", pairs / t.kernel_seconds},
                                {"evaluations", t.samples}});
      }
    }
  } else {
    // Seed 002's table: steps per second (1 / seconds per evaluation) against block size.
    const Precision p = precisions.front();
    ParticleSystem ps = bench_bodies(kSweepBlockN);
    fmt::print(human, "steps/s (1 / s per evaluation, kernel-only in brackets), N = {}, {}, GPU: {}\n", kSweepBlockN,
               to_string(p), gpu);
    fmt::print(human, "{:>6}", "block");
    for (const auto& k : kernels) fmt::print(human, " {:>24}", k);
    fmt::print(human, "\n");
    j["precision"] = to_string(p);
    j["block_sweep"] = {{"n", kSweepBlockN}, {"rows", nlohmann::ordered_json::array()}};
    for (int b = 8; b <= 1024; b *= 2) {
      fmt::print(human, "{:>6}", b);
      for (const auto& k : kernels) {
        auto solver = gpu_direct_solver(k, p, b);
        const GpuTiming t = time_gpu(*solver, ps, a.seconds);
        fmt::print(human, " {:>11.1f} ({:>10.1f})", 1 / t.seconds, 1 / t.kernel_seconds);
        j["block_sweep"]["rows"].push_back({{"kernel", k}, {"block_size", b}, {"steps_per_second", 1 / t.seconds},
                                            {"kernel_steps_per_second", 1 / t.kernel_seconds}});
      }
      fmt::print(human, "\n");
      std::fflush(human);
    }
    // Steps per second against N, each kernel at the chosen block size.
    fmt::print(human, "\nsteps/s (kernel-only interactions/s in brackets) against N, {}, block size {}\n",
               to_string(p), block_text);
    fmt::print(human, "{:>8}", "N");
    for (const auto& k : kernels) fmt::print(human, " {:>24}", k);
    fmt::print(human, "\n");
    j["n_sweep"] = {{"block_size", a.block_size}, {"rows", nlohmann::ordered_json::array()}};
    for (std::size_t n = 1024; n <= kGpuDefaultN; n *= 2) {
      ParticleSystem bodies = bench_bodies(n);
      fmt::print(human, "{:>8}", n);
      for (const auto& k : kernels) {
        auto solver = gpu_direct_solver(k, p, a.block_size);
        const GpuTiming t = time_gpu(*solver, bodies, a.seconds);
        const double pairs = double(n) * double(n);
        fmt::print(human, " {:>11.1f} ({:>10.3e})", 1 / t.seconds, pairs / t.kernel_seconds);
        j["n_sweep"]["rows"].push_back({{"kernel", k}, {"n", n}, {"steps_per_second", 1 / t.seconds},
                                        {"kernel_interactions_per_second", pairs / t.kernel_seconds}});
      }
      fmt::print(human, "\n");
      std::fflush(human);
    }
  }
  if (a.json) fmt::print("{}\n", j.dump(2));
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
  auto* kernels = cmd->add_option("--kernel", args->kernels,
                                  "Kernels to time (CPU: fast, scalar; GPU: naive, tiled, fast)")
                      ->check(CLI::IsMember({"fast", "scalar", "naive", "tiled"}));
  cmd->add_option("--device", args->device, "direct: time the CPU or the GPU (CUDA) direct sum")
      ->check(CLI::IsMember({"cpu", "gpu"}))
      ->capture_default_str();
  cmd->add_option("--block-size", args->block_size, "gpu: threads per block (0 = each kernel's default)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_flag("--sweep-block-size", args->sweep_block_size,
                "gpu: steps/s for block sizes 8..1024 at N = 16384, then against N = 1024..1048576");
  cmd->add_option("--theta", args->theta, "tree: opening angle")->check(CLI::NonNegativeNumber)->capture_default_str();
  cmd->add_flag("--quadrupole", args->quadrupole, "tree: add quadrupole moments");
  cmd->add_option("--precision", args->precision,
                  "tree: force arithmetic, float, double or auto (float for the tree); gpu direct: float, "
                  "double or auto (both)")
      ->check(CLI::IsMember({"auto", "float", "double"}))
      ->capture_default_str();
  cmd->add_flag("--json", args->json, "Print one JSON object with the results on stdout");
  cmd->callback([args, count, kernels] {
    if (args->suite == "tree") {
      if (args->device == "gpu") throw Error("bench tree --device gpu: not available yet");
      if (count->count() == 0) args->n = kTreeDefaultN;
      bench_tree(*args);
    } else if (args->device == "gpu") {
      if (count->count() == 0) args->n = kGpuDefaultN;
      bench_direct_gpu(*args, kernels->count() ? args->kernels : std::vector<std::string>{});
    } else {
      for (const auto& k : args->kernels) {
        if (k != "fast" && k != "scalar") throw Error("--kernel " + k + ": GPU only (bench direct --device gpu)");
      }
      if (args->block_size != 0 || args->sweep_block_size) throw Error("--block-size, --sweep-block-size: GPU only (--device gpu)");
      bench_direct(*args);
    }
  });
}

}  // namespace nbody::cli
