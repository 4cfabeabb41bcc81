#pragma once
// nbody bench theta (issue #22): accuracy against cost for every opening criterion of the
// tree. For each criterion (geometric, bmax: a sweep of theta; relative: a sweep of alpha)
// and order (monopole, quadrupole), the median and p99 relative force errors against one
// float64 direct-sum reference on a sample of bodies, and the time of one force evaluation
// (build + walk, the fastest of a few after a warm-up); the Pareto front of each
// criterion+order. Without -o: a table, the points as JSON (--json [FILE]) and the plot
// (--plot FILE.png, bench/tree_pareto.py); with -o the report suite theta-pareto.
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/bench/bench_common.hpp"
#include "cli/bench/suite_report.hpp"
#include "cli/force_accuracy.hpp"
#include "nbody/gravity.hpp"

namespace nbody::cli::bench {

/// The options of bench theta beyond BenchArgs, as given (checked by resolve_theta_sweep).
struct ThetaBenchArgs {
  std::string model;                  // "": plummer
  std::optional<std::uint64_t> seed;  // the model's; unset: 42
  std::optional<std::size_t> sample;  // unset: the device's default
  std::vector<std::string> thetas;    // geometric and bmax; empty: the defaults
  std::vector<std::string> alphas;    // relative
  std::vector<std::string> criteria;  // geometric, bmax, relative; empty: all
  std::vector<std::string> orders;    // monopole, quadrupole; empty: both
  bool thetas_given = false, alphas_given = false, criteria_given = false, orders_given = false;
  std::string plot;  // --plot FILE.png
};

/// One device's sweep, every choice made.
struct ThetaSweep {
  std::string device;  // cpu or gpu
  std::string model;
  std::size_t n = 0;
  std::uint64_t seed = 42;
  std::size_t sample = 0;
  std::uint64_t sample_seed = 1;
  GravityOptions gravity;  // tree, device, precision (resolved), softening, threads
  std::vector<OpeningCriterion> criteria;
  std::vector<bool> orders;  // quadrupole or not
  std::vector<double> thetas, alphas;
  TimingPlan timing;
  bool quick = false;
};

/// The defaults when not given: N 100000, softening 0.01, sample 2000 on the CPU; N 1048576,
/// softening 0.05, sample 4096 on the GPU; thetas 0.3-0.7, alphas 0.0005-0.008. `quick`: N
/// 5000, sample 200, thetas 0.4, 0.7, alphas 0.001, 0.004; `report` (the small sweep of the
/// report suite): thetas 0.3, 0.5, 0.7, alphas 0.0005, 0.002, 0.008. Throws nbody::Error
/// naming the option and value for bad input.
[[nodiscard]] ThetaSweep resolve_theta_sweep(const BenchArgs& a, const ThetaBenchArgs& t,
                                             const std::string& device, bool n_given, bool report);

struct SweepPoint {
  OpeningCriterion mac = OpeningCriterion::Geometric;
  bool quadrupole = false;
  double value = 0;  // theta, or alpha for the relative criterion
  SolverMeasurement measured;
  bool front_median = false, front_p99 = false;

  [[nodiscard]] std::string series() const;  // e.g. "geometric monopole"
  [[nodiscard]] std::string knob() const;    // "theta" or "alpha"
  [[nodiscard]] std::string label() const;   // e.g. "theta 0.5"
  [[nodiscard]] double ms() const { return 1e3 * measured.best_stage_seconds(); }
};

struct SweepResult {
  std::size_t n = 0;  // bodies generated
  std::vector<SweepPoint> points;
  double reference_seconds = 0;
  std::size_t sampled = 0;
};

/// Generates the bodies, computes the reference once, measures every point (progress lines
/// on `progress`) and marks the fronts.
[[nodiscard]] SweepResult run_theta_sweep(const ThetaSweep& s, std::FILE* progress);

/// Per series (criterion + order): a point is on the median front when no other point of the
/// series is at least as fast and at least as accurate and better in one (likewise p99).
void mark_fronts(std::vector<SweepPoint>& points);

/// ECL-BH 4.5 (Burtscher and Pingali) on an H200, Plummer N = 1,048,576, eps = 0.05, float,
/// one float64 checker (issue #22): the points the GPU plots mark.
struct PublishedPoint {
  const char* label;
  double median, p99, ms;
};
inline constexpr PublishedPoint kEclBh[] = {{"ECL-BH 4.5 (1)", 7.16e-4, 4.26e-3, 9.97},
                                            {"ECL-BH 4.5 (2)", 1.43e-4, 9.83e-4, 46.0}};
inline constexpr const char* kEclBhSource =
    "ECL-BH 4.5 (Burtscher and Pingali), measured on an H200 with one float64 checker, "
    "Plummer N = 1,048,576, eps = 0.05, float (issue #22)";

/// The console command (no -o).
void bench_theta(const BenchArgs& a, const ThetaBenchArgs& t, bool n_given);

/// The report suite theta-pareto (bench theta -o DIR, bench all): the small sweep on each
/// device of --device.
[[nodiscard]] SuiteResult theta_pareto_suite(const BenchArgs& a, const ThetaBenchArgs& t);

}  // namespace nbody::cli::bench
