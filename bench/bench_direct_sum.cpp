// Direct-sum throughput: the scalar reference and the fast SIMD/OpenMP solver, float and
// double, one thread and all threads, N = 1024 .. 65536.
//
// items_per_second is pairwise interactions per second, N*N per force evaluation
// (wall-clock time, so that threads count). For example:
//   nbody_bench --benchmark_filter='fast.*/16384/' --benchmark_repetitions=5
//   nbody_bench --benchmark_filter='scalar' --benchmark_min_time=0.1
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <string>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "../tests/unit/test_helpers.hpp"
#include "gravity/direct_scalar.hpp"
#include "gravity/direct_simd.hpp"
#include "nbody/gravity.hpp"
#include "nbody/particles.hpp"

namespace {

using nbody::Precision;

enum class Kernel { Scalar, Fast };

std::unique_ptr<nbody::GravitySolver> make_solver(Kernel kernel, Precision precision, int threads) {
  const double G = 1.0, softening = 0.01;
  if (kernel == Kernel::Fast) return nbody::make_direct_simd(precision, G, softening, threads);
  if (precision == Precision::Float) {
    return std::make_unique<nbody::DirectSumScalar<float>>(G, softening);
  }
  return std::make_unique<nbody::DirectSumScalar<double>>(G, softening);
}

/// Arguments: N, threads (the scalar reference is single-threaded).
void direct_sum(benchmark::State& state, Kernel kernel, Precision precision) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto threads = static_cast<int>(state.range(1));
  nbody::ParticleSystem ps = nbody::test::random_system(n, 2024);
  auto solver = make_solver(kernel, precision, threads);
  solver->compute_accelerations(ps);  // warm-up: scratch allocation, thread pool
  for (auto _ : state) {
    solver->compute_accelerations(ps);
    benchmark::DoNotOptimize(ps.ax.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(n) * static_cast<std::int64_t>(n) *
                          state.iterations());
  state.SetLabel(solver->name());
}

int all_threads() {
#if defined(_OPENMP)
  return omp_get_max_threads();
#else
  return 1;
#endif
}

/// N = 1024, 2048, ..., 65536 (16384 included), with the given thread counts.
void sizes(benchmark::internal::Benchmark* b, bool threaded) {
  b->ArgNames({"N", "threads"});
  const int all = all_threads();
  for (std::int64_t n = 1024; n <= 65536; n *= 2) {
    b->Args({n, 1});
    if (threaded && all > 1) b->Args({n, all});
  }
  b->UseRealTime()->Unit(benchmark::kMillisecond);
}

void scalar_sizes(benchmark::internal::Benchmark* b) {
  sizes(b, false);
}
void fast_sizes(benchmark::internal::Benchmark* b) {
  sizes(b, true);
}

BENCHMARK_CAPTURE(direct_sum, fast_float, Kernel::Fast, Precision::Float)->Apply(fast_sizes);
BENCHMARK_CAPTURE(direct_sum, fast_double, Kernel::Fast, Precision::Double)->Apply(fast_sizes);
BENCHMARK_CAPTURE(direct_sum, scalar_float, Kernel::Scalar, Precision::Float)->Apply(scalar_sizes);
BENCHMARK_CAPTURE(direct_sum, scalar_double, Kernel::Scalar, Precision::Double)
    ->Apply(scalar_sizes);

}  // namespace

BENCHMARK_MAIN();
