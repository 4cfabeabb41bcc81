#pragma once
// What the report suites share (report_suites.cpp, report_stage_suites.cpp): the time
// budget, the test systems, the solver options and the median step time.
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

namespace nbody::cli::bench::report {

using Clock = std::chrono::steady_clock;
using json = nlohmann::ordered_json;

constexpr double kDt = 1e-3;
constexpr double kSoftening = 0.01;

/// Time budget per configuration and the largest step time worth measuring.
struct Budget {
  double per_config;
  double step_cap;
};
inline Budget budget(const BenchArgs& a) {
  return a.quick ? Budget{0.05, 0.25} : Budget{0.4, 4.0};
}

inline ParticleSystem plummer(std::size_t n) {
  ModelOptions m;
  m.n = n;
  m.seed = 42;
  return generate(m);
}

inline GravityOptions solver_options(const BenchArgs& a, const std::string& device,
                                     GravityAlgorithm algorithm,
                                     ForceKernel kernel = ForceKernel::Fast, int threads = 0,
                                     int block = 0) {
  GravityOptions g;
  g.device = device == "gpu" ? Device::Gpu : Device::Cpu;
  g.algorithm = algorithm;
  g.kernel = kernel;
  g.precision = Precision::Float;             // the seeds' precision, on every device
  g.softening = softening_or(a, kSoftening);  // --softening, else 0.01
  g.theta = 0.5;
  g.threads = threads;
  g.block_size = block;
  return g;
}

/// Median seconds per leapfrog step of a simulation after one warm-up step.
inline double step_seconds(Simulation& sim, double per_config) {
  sim.step(kDt);
  std::vector<double> samples;
  const auto start = Clock::now();
  while (samples.size() < 3 ||
         (std::chrono::duration<double>(Clock::now() - start).count() < per_config &&
          samples.size() < 200)) {
    const auto t0 = Clock::now();
    sim.step(kDt);
    samples.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return median_of(samples);
}

inline double step_seconds(const ParticleSystem& ps, const GravityOptions& g, double per_config) {
  Simulation sim(ps, g, IntegratorOptions{});
  return step_seconds(sim, per_config);
}

/// After one warm-up step, steps with the stage timers cleared: at least 3, then while
/// `per_config` seconds last, at most `most`; returns the steps taken (sim.times() and
/// sim.gravity_stages() hold their sums).
inline std::uint64_t timed_steps(Simulation& sim, double per_config, std::uint64_t most) {
  sim.step(kDt);
  sim.times() = PhaseTimes{};
  sim.gravity_stages() = PhaseTimes{};
  const auto start = Clock::now();
  std::uint64_t steps = 0;
  while (steps < 3 || (std::chrono::duration<double>(Clock::now() - start).count() < per_config &&
                       steps < most)) {
    sim.step(kDt);
    ++steps;
  }
  return steps;
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

inline std::vector<std::size_t> scaling_sizes(const BenchArgs& a) {
  if (a.quick) return {256, 1024, 4096};
  return {1024, 4096, 16384, 65536, 100000, 262144, 500000, 1048576};
}

inline json plot(const std::string& file, const std::string& kind, const std::string& x,
                 const json& y, const std::string& group, const std::string& title,
                 const std::string& xlabel, const std::string& ylabel, bool logx = false,
                 bool logy = false) {
  json p = {{"file", file},   {"kind", kind},   {"x", x},           {"y", y},
            {"group", group}, {"title", title}, {"xlabel", xlabel}, {"ylabel", ylabel},
            {"logx", logx},   {"logy", logy}};
  return p;
}

}  // namespace nbody::cli::bench::report
