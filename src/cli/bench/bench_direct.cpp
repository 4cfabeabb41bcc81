// nbody bench direct: pairwise interactions per second of the direct sum, on the CPU
// (per core too) or, with --device gpu, of the CUDA kernels (whole evaluation and kernel
// alone), optionally sweeping block sizes and N (seed 002's tables).
#include <algorithm>
#include <chrono>
#include <memory>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/bench/bench_common.hpp"
#include "nbody/build_info.hpp"
#include "nbody/error.hpp"
#include "nbody/gravity.hpp"
#include "nbody/initial_conditions.hpp"

namespace nbody::cli::bench {

namespace {
struct DirectResult {
  std::string solver;
  std::string precision;
  int threads;
  double seconds_per_eval;
  double interactions_per_second;
};

struct GpuTiming {
  double seconds = 0;  // median wall time of one compute_accelerations (upload + kernel + download)
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
  while (wall.size() < 3 || (std::chrono::duration<double>(Clock::now() - start).count() < budget &&
                             wall.size() < 1000)) {
    const auto t0 = Clock::now();
    solver.compute_accelerations(ps);
    wall.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    kernel.push_back(solver.stats().walk_seconds);
  }
  return {median_of(wall), median_of(kernel), wall.size()};
}

std::unique_ptr<GravitySolver> gpu_direct_solver(const BenchArgs& a, ForceKernel kernel,
                                                 Precision p, int block) {
  GravityOptions g;
  g.device = Device::Gpu;
  g.kernel = kernel;
  g.precision = p;
  g.block_size = block;
  g.softening = softening_or(a, kBenchSoftening);
  g.deterministic = a.deterministic;
  return make_gravity_solver(g);
}
}  // namespace

void bench_direct_gpu(const BenchArgs& a, std::vector<ForceKernel> kernels) {
  std::FILE* human = a.json ? stderr : stdout;
  if (kernels.empty()) kernels = {ForceKernel::Naive, ForceKernel::Tiled, ForceKernel::Fast};
  std::vector<Precision> precisions{Precision::Float, Precision::Double};
  if (a.precision == "float") precisions = {Precision::Float};
  if (a.precision == "double") precisions = {Precision::Double};
  for (const ForceKernel k : kernels)
    (void)gpu_direct_solver(a, k, precisions.front(), a.block_size);  // fail fast
  const std::vector<GpuDevice> devices = gpu_devices();
  const std::string gpu = devices.empty() ? "?" : devices.front().name;
  const std::string block_text = a.block_size > 0 ? std::to_string(a.block_size) : "default";
  const double softening = softening_or(a, kBenchSoftening);
  nlohmann::ordered_json j = {{"suite", "direct"},
                              {"device", "gpu"},
                              {"gpu", gpu},
                              {"softening", softening},
                              {"deterministic", a.deterministic}};

  if (!a.sweep_block_size) {
    ParticleSystem ps = bench_bodies(a.n);
    fmt::print(human, "direct sum on the GPU, N = {}, GPU: {}, block size {}, softening {:g}{}\n",
               a.n, gpu, block_text, softening, a.deterministic ? ", deterministic" : "");
    fmt::print(human, "{:<28} {:>9} {:>12} {:>12} {:>16} {:>16}\n", "solver", "precision",
               "ms/eval", "kernel ms", "interactions/s", "kernel inter/s");
    j["n"] = a.n;
    j["block_size"] = a.block_size;
    j["results"] = nlohmann::ordered_json::array();
    for (Precision p : precisions) {
      for (const ForceKernel k : kernels) {
        auto solver = gpu_direct_solver(a, k, p, a.block_size);
        const GpuTiming t = time_gpu(*solver, ps, a.seconds);
        const double pairs = double(a.n) * double(a.n);
        fmt::print(human, "{:<28} {:>9} {:>12.3f} {:>12.3f} {:>16.3e} {:>16.3e}\n", solver->name(),
                   to_string(p), 1e3 * t.seconds, 1e3 * t.kernel_seconds, pairs / t.seconds,
                   pairs / t.kernel_seconds);
        std::fflush(human);
        j["results"].push_back({{"solver", solver->name()},
                                {"kernel", to_string(k)},
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
    fmt::print(human,
               "steps/s (1 / s per evaluation, kernel-only in brackets), N = {}, {}, GPU: {}\n",
               kSweepBlockN, to_string(p), gpu);
    fmt::print(human, "{:>6}", "block");
    for (const ForceKernel k : kernels) fmt::print(human, " {:>24}", to_string(k));
    fmt::print(human, "\n");
    j["precision"] = to_string(p);
    j["block_sweep"] = {{"n", kSweepBlockN}, {"rows", nlohmann::ordered_json::array()}};
    for (int b = 8; b <= 1024; b *= 2) {
      fmt::print(human, "{:>6}", b);
      for (const ForceKernel k : kernels) {
        auto solver = gpu_direct_solver(a, k, p, b);
        const GpuTiming t = time_gpu(*solver, ps, a.seconds);
        fmt::print(human, " {:>11.1f} ({:>10.1f})", 1 / t.seconds, 1 / t.kernel_seconds);
        j["block_sweep"]["rows"].push_back({{"kernel", to_string(k)},
                                            {"block_size", b},
                                            {"steps_per_second", 1 / t.seconds},
                                            {"kernel_steps_per_second", 1 / t.kernel_seconds}});
      }
      fmt::print(human, "\n");
      std::fflush(human);
    }
    // Steps per second against N, each kernel at the chosen block size.
    fmt::print(human,
               "\nsteps/s (kernel-only interactions/s in brackets) against N, {}, block size {}\n",
               to_string(p), block_text);
    fmt::print(human, "{:>8}", "N");
    for (const ForceKernel k : kernels) fmt::print(human, " {:>24}", to_string(k));
    fmt::print(human, "\n");
    j["n_sweep"] = {{"block_size", a.block_size}, {"rows", nlohmann::ordered_json::array()}};
    for (std::size_t n = 1024; n <= kGpuDefaultN; n *= 2) {
      ParticleSystem bodies = bench_bodies(n);
      fmt::print(human, "{:>8}", n);
      for (const ForceKernel k : kernels) {
        auto solver = gpu_direct_solver(a, k, p, a.block_size);
        const GpuTiming t = time_gpu(*solver, bodies, a.seconds);
        const double pairs = double(n) * double(n);
        fmt::print(human, " {:>11.1f} ({:>10.3e})", 1 / t.seconds, pairs / t.kernel_seconds);
        j["n_sweep"]["rows"].push_back(
            {{"kernel", to_string(k)},
             {"n", n},
             {"steps_per_second", 1 / t.seconds},
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
  ParticleSystem ps = bench_bodies(a.n);
  std::vector<int> thread_counts =
      a.threads > 0 ? std::vector<int>{a.threads} : std::vector<int>{1};
  if (a.threads == 0 && info.max_threads > 1) thread_counts.push_back(info.max_threads);

  const double softening = softening_or(a, kBenchSoftening);
  fmt::print(human, "direct sum, N = {}, CPU: {}, {} threads available, softening {:g}\n", a.n,
             info.cpu_model, info.max_threads, softening);
  fmt::print(human, "{:<28} {:>9} {:>8} {:>12} {:>16} {:>16}\n", "solver", "precision", "threads",
             "ms/eval", "interactions/s", "per core");
  std::vector<DirectResult> results;
  // Threads outermost: after a parallel region OpenMP's idle workers spin for a while, and
  // on machines whose cores share a physical core that slows a following 1-thread run.
  for (int t : thread_counts) {
    for (const ForceKernel kernel : a.kernels) {
      for (Precision p : {Precision::Float, Precision::Double}) {
        GravityOptions g;
        g.kernel = kernel;
        g.precision = p;
        g.threads = t;
        g.softening = softening;
        auto solver = make_gravity_solver(g);
        if (kernel == ForceKernel::Scalar && t > 1) continue;  // the reference is single-threaded
        const double s = time_evaluations(*solver, ps, a.seconds);
        const double rate = double(a.n) * double(a.n) / s;
        results.push_back({solver->name(), std::string(to_string(p)), t, s, rate});
        fmt::print(human, "{:<28} {:>9} {:>8} {:>12.3f} {:>16.3e} {:>16.3e}\n", solver->name(),
                   to_string(p), t, 1e3 * s, rate, rate / t);
        std::fflush(human);
      }
    }
  }
  if (a.json) {
    nlohmann::ordered_json j = {{"suite", "direct"},
                                {"n", a.n},
                                {"cpu", info.cpu_model},
                                {"softening", softening},
                                {"results", nlohmann::ordered_json::array()}};
    for (const auto& r : results) {
      j["results"].push_back(
          {{"solver", r.solver},
           {"precision", r.precision},
           {"threads", r.threads},
           {"seconds_per_eval", r.seconds_per_eval},
           {"interactions_per_second", r.interactions_per_second},
           {"interactions_per_second_per_core", r.interactions_per_second / r.threads}});
    }
    fmt::print("{}\n", j.dump(2));
  }
}

}  // namespace nbody::cli::bench
