#pragma once
// nbody bench small (issue #38): microseconds per step of few-body runs against N (3 to
// 1000) for each integrator, the threads the run chose, and REBOUND's figure for the same
// bodies beside it when a Python with REBOUND is found (NBODY_PYTHON, else python3).
#include <cstdio>

#include "cli/bench/bench_common.hpp"
#include "cli/bench/suite_report.hpp"

namespace nbody::cli::bench {

[[nodiscard]] SuiteResult small_suite(const BenchArgs& a, std::FILE* progress);

}  // namespace nbody::cli::bench
