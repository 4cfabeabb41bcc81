#pragma once
// nbody bench timestep (issue #19): fixed against adaptive (block) time steps at a fixed end
// time, as energy error against cost. Its options beyond BenchArgs, and the console output.
#include <cstdio>
#include <string>
#include <vector>

#include "cli/bench/bench_common.hpp"
#include "cli/bench/suite_report.hpp"

namespace nbody::cli::bench {

struct TimestepBenchArgs {
  std::string model;                  // "": hernquist when generate() knows it, else plummer
  double t_end = 0;                   // 0: kTimestepDefaultTEnd
  std::vector<double> dts;            // fixed steps; empty: t_end / 16 ... t_end / 512
  std::vector<double> etas;           // adaptive steps at the largest dt; empty: 0.1 ... 0.00625
  std::vector<std::string> criteria;  // adaptive step criteria; empty: every one
  std::vector<std::string> modes;     // adaptive, hierarchical; empty: adaptive
  std::uint64_t seed = 42;            // the model's
  std::string command;                // the command line the report names (filled by the suite)
};

constexpr double kTimestepDefaultTEnd = 1.0;
constexpr std::size_t kTimestepDefaultN = 20000;     // CPU
constexpr std::size_t kTimestepDefaultGpuN = 65536;  // the largest N with the exact energy
constexpr std::size_t kTimestepQuickN = 2000;

/// hernquist when model_names() has it, else plummer.
[[nodiscard]] std::string default_timestep_model();

/// Integrates the model to t_end with each fixed dt and each eta (adaptive, at the largest
/// dt); a.n is the N to use (the command sets the default). Progress lines go to `progress`.
[[nodiscard]] SuiteResult timestep_suite(const BenchArgs& a, const TimestepBenchArgs& t,
                                         std::FILE* progress);

}  // namespace nbody::cli::bench
