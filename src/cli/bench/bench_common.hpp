#pragma once
// Shared by the `nbody bench` suites (one file each in this folder): the options, the
// timing helpers and the bodies every suite measures on.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "nbody/gravity.hpp"
#include "nbody/particles.hpp"

namespace nbody::cli::bench {

struct BenchArgs {
  std::string suite;
  std::size_t n = 16384;  // direct; tree defaults to kTreeDefaultN unless -n is given
  double seconds = 1.0;   // time per configuration
  int threads = 0;        // 0: 1 thread and all threads
  std::vector<ForceKernel> kernels{ForceKernel::Fast, ForceKernel::Scalar};
  bool json = false;
  std::string json_file;              // --json FILE (bench theta): the JSON there, not on stdout
  double theta = 0.5;                 // tree only
  bool quadrupole = false;            // tree only
  std::string mac = "relative";       // tree only: the opening criterion (GravityOptions')
  double alpha = 0.002;               // tree only: the relative criterion's alpha
  std::string tree_build = "morton";  // tree --device gpu: morton or insertion (--tree-build)
  std::string walk_order = "tree";    // tree --device gpu: tree or input (the seeds' sort off)
  std::string precision = "auto";     // tree, gpu direct (auto: both); auto = float for the tree
  std::string device = "cpu";         // direct: cpu or gpu
  int block_size = 0;                 // gpu: threads per block (0 = kernel default)
  bool sweep_block_size = false;      // gpu: steps/s over block sizes (N = 16384) and over N
  std::string collisions = "bounce";  // collisions: bounce or merge
  double restitution = 1.0;           // collisions: bounce
  int iterations = 0;                 // collisions: passes (0: 1 against N, then 1..8)
  int dim = 3;                        // collisions
  double volume_fraction = 0.2;       // collisions: sum of body volumes / box volume
  bool quick = false;                 // report suites: small sizes, well under a minute
  std::string gravity = "both";       // scaling-mpi: direct, tree or both
  bool timings = false;               // scaling-mpi: rank 0's ms per stage
  std::string scaling = "both";       // scaling-mpi: strong, weak or both
  int from_ranks = 1;                 // scaling-mpi: the fewest ranks (the efficiencies' base)
  std::string output_dir = "nbody-bench";  // report suites: CSV, JSON, PNG, report.md
  std::optional<double> softening;         // --softening; unset: each suite's own default
  bool deterministic = false;              // direct --device gpu: GravityOptions::deterministic
  std::string collision_search = "grid";   // collisions: grid or tree
};

constexpr std::size_t kGpuDefaultN = 1048576;
constexpr std::size_t kSweepBlockN = 16384;

constexpr std::size_t kTreeDefaultN = 100000;
constexpr std::size_t kCollisionsDefaultN = 100000;
constexpr double kBenchSoftening = 0.01;
/// The softening a suite uses: --softening when given, else the suite's default
/// (kBenchSoftening for the direct sum, the CPU tree and the reports; 0.05 for the GPU tree).
inline double softening_or(const BenchArgs& a, double suite_default) {
  return a.softening.value_or(suite_default);
}
// bench tree: the direct sum is measured up to this N, above it timed at kDirectProbeN and
// scaled by N^2 (at 100k bodies each direct evaluation takes seconds, and the timing repeats it).
constexpr std::size_t kDirectMeasuredMaxN = 30000;
constexpr std::size_t kDirectProbeN = 16384;

/// Median seconds of one force evaluation, repeated for about `budget` seconds (after a
/// warm-up evaluation).
double time_evaluations(GravitySolver& solver, ParticleSystem& ps, double budget);
/// The tree's opening criterion in a header line: "theta = 0.5", "mac bmax, theta = 0.5" or
/// "mac relative, alpha = 0.001 (first evaluation theta = 0.5)".
std::string criterion_label(const GravityOptions& g);
double median_of(std::vector<double> values);
/// The bodies the direct-sum suites time: a seeded uniform cube.
ParticleSystem bench_bodies(std::size_t n);

void bench_direct(const BenchArgs& a);
void bench_direct_gpu(const BenchArgs& a, std::vector<ForceKernel> kernels);
void bench_tree(const BenchArgs& a);
/// The GPU tree resident in a simulation, for each N of `sizes`.
void bench_tree_gpu(const BenchArgs& a, const std::vector<std::size_t>& sizes);
/// bench tree --device gpu without -n: the two sizes.
inline const std::vector<std::size_t> kTreeGpuDefaultSizes{1048576, 16777216};
void bench_collisions(const BenchArgs& a);
/// Strong and weak scaling over the MPI ranks (run under mpirun; one rank gives P = 1 only).
void bench_scaling_mpi(const BenchArgs& a, bool n_given);

struct SuiteResult;
// The report suites (issue 7): each returns its table for write_suite (suite_report.hpp).
SuiteResult scaling_suite(const BenchArgs& a);
SuiteResult block_size_suite(const BenchArgs& a);
SuiteResult threads_suite(const BenchArgs& a);
SuiteResult phases_suite(const BenchArgs& a);
SuiteResult theta_suite(const BenchArgs& a);
SuiteResult collisions_suite(const BenchArgs& a);
SuiteResult speedup_suite(const BenchArgs& a);
/// The seed documents' tree experiments (report_seed_suites.cpp).
SuiteResult seeds_suite(const BenchArgs& a);
/// The grid against seed 001's tree collision search (bench_collisions.cpp).
SuiteResult seeds_collisions_suite(const BenchArgs& a);

}  // namespace nbody::cli::bench
