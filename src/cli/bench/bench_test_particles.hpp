#pragma once
// nbody bench test-particles (issue #38): microseconds per step of the Sun, the four giant
// planets and N massless test particles (default 10^6) with the leapfrog, on the CPU and
// (--device gpu or all) the GPU, REBOUND's N_active = 5 run of the same bodies beside them
// when a Python with REBOUND is found, and whether the planets moved bit for bit as without
// the test particles.
#include <cstdio>

#include "cli/bench/bench_common.hpp"
#include "cli/bench/suite_report.hpp"

namespace nbody::cli::bench {

/// `count_given`: -n was given (the number of test particles), else 10^6 (--quick 20,000).
[[nodiscard]] SuiteResult test_particles_suite(const BenchArgs& a, bool count_given,
                                               std::FILE* progress);

}  // namespace nbody::cli::bench
