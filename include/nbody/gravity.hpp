#pragma once
// Gravity solvers: one interface, several implementations chosen at run time
// (make_gravity_solver): on the CPU the direct sum (scalar reference, SIMD/OpenMP) and the
// Barnes-Hut tree; on the GPU (CUDA) the direct sum and the tree.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "nbody/particles.hpp"

namespace nbody {

/// Arithmetic of the force computation. Auto: float64 for the exact direct sum, float32
/// for the tree, whose truncation error (~1e-3 at theta 0.5) dwarfs float32 rounding
/// (~1e-7), as in GADGET and Bonsai.
enum class Precision { Auto, Float, Double };
enum class Device { Cpu, Gpu };
/// The force algorithm: the exact O(N^2) direct sum, the Barnes-Hut tree, or None (no
/// gravity: ballistic and granular runs, collisions only; G = 0 means the same).
enum class GravityAlgorithm { Direct, Tree, None };
/// The direct-sum kernel. CPU: Fast (SIMD + OpenMP) or Scalar (the reference);
/// GPU: Fast, Tiled or Naive. make_gravity_solver() refuses the others for a device.
enum class ForceKernel { Fast, Scalar, Tiled, Naive };
/// The tree's opening criterion (physics/opening_criterion.hpp): geometric (s/d < theta, s
/// the cell's edge), bmax (b_max/d < theta, b_max the largest distance from the cell's
/// centre of mass to a body in it: Barnes 1994) or relative (GADGET-4: a cell is used when
/// G M/d^2 (s/d)^2 <= alpha |a_old|, with the body's acceleration of the last evaluation).
enum class OpeningCriterion { Geometric, Bmax, Relative };
/// How the tree is built. Morton (the default): keys, a radix sort and a top-down split, no
/// locks (tree_build.cpp). Insertion: the seed documents' build after Burtscher & Pingali
/// (2011): every body inserted from the root, concurrently, each child slot taken under a
/// lock (OpenMP locks per cell on the CPU, atomicCAS with a -2 marker on the GPU), then the
/// tree laid out in the same flat order as the Morton build's, so the moments, the walk and
/// the integration are shared.
enum class TreeBuild { Morton, Insertion };

/// Whether the tree opens by the last evaluation's accelerations when it has them (the
/// relative criterion), on the CPU and the GPU alike. Not at theta 0, which stays the direct
/// sum with every criterion, as users of the geometric one expect.
[[nodiscard]] inline bool opens_by_old_accelerations(OpeningCriterion mac, double theta) {
  return mac == OpeningCriterion::Relative && theta != 0;
}

[[nodiscard]] std::string_view to_string(Precision p);
/// The precision Auto stands for with this algorithm.
[[nodiscard]] Precision resolve_precision(Precision p, GravityAlgorithm a);
[[nodiscard]] std::string_view to_string(Device d);
/// "auto", "float" or "double"; throws nbody::Error naming --precision otherwise.
[[nodiscard]] Precision parse_precision(std::string_view name);
/// "cpu" or "gpu"; throws nbody::Error naming --device otherwise.
[[nodiscard]] Device parse_device(std::string_view name);
[[nodiscard]] std::vector<std::string> precision_names();
[[nodiscard]] std::vector<std::string> device_names();

// The names of the option enums (src/core/option_names.cpp): parsed once where options
// come in (command line, config file, Python), written back with to_string().
/// "direct", "tree" or "none".
[[nodiscard]] std::string_view to_string(GravityAlgorithm a);
/// "fast", "scalar", "tiled" or "naive".
[[nodiscard]] std::string_view to_string(ForceKernel k);
/// "direct", "tree" or "none"; throws nbody::Error naming --gravity (listing the choices)
/// otherwise.
[[nodiscard]] GravityAlgorithm parse_gravity_algorithm(std::string_view name);
/// "fast", "scalar", "tiled" or "naive"; throws nbody::Error naming --kernel otherwise.
[[nodiscard]] ForceKernel parse_force_kernel(std::string_view name);
/// "geometric", "bmax" or "relative".
[[nodiscard]] std::string_view to_string(OpeningCriterion c);
/// "geometric", "bmax" or "relative"; throws nbody::Error naming --mac otherwise.
[[nodiscard]] OpeningCriterion parse_opening_criterion(std::string_view name);
/// "morton" or "insertion".
[[nodiscard]] std::string_view to_string(TreeBuild b);
/// "morton" or "insertion"; throws nbody::Error naming --tree-build otherwise.
[[nodiscard]] TreeBuild parse_tree_build(std::string_view name);
/// The names parse_gravity_algorithm() takes: "direct", "tree", "none".
[[nodiscard]] std::vector<std::string> gravity_algorithm_names();

struct GravityOptions {
  GravityAlgorithm algorithm = GravityAlgorithm::Direct;
  ForceKernel kernel = ForceKernel::Fast;  // CPU direct: Fast (SIMD/OpenMP) or Scalar (reference);
                                           // GPU direct: Fast, Tiled or Naive
  Device device = Device::Cpu;
  Precision precision = Precision::Auto;
  double G = 1.0;
  double softening = 0.0;   // Plummer epsilon
  int threads = 0;          // OpenMP threads; 0 = OpenMP's default
  double theta = 0.5;       // tree: opening angle (cell accepted when size/distance < theta)
  bool quadrupole = false;  // tree: add quadrupole moments to cell interactions
  // tree: when a cell is opened. Relative by the Pareto fronts of docs/tree-accuracy.md: at
  // alpha 0.002 about the median error of geometric theta 0.5, half its p99, in less time,
  // on the CPU and the GPU.
  OpeningCriterion mac = OpeningCriterion::Relative;
  double alpha = 0.002;  // tree, mac relative: the accepted force error per cell, relative to
                         // |a| (GADGET-4's ErrTolForceAcc); the first evaluation uses theta
  int dim = 3;           // 3: octree, 2: quadtree (tree solvers)
  TreeBuild tree_build = TreeBuild::Morton;  // tree: how it is built (the same tree's forces)
  // GPU tree, nbody bench tree --walk-order input: the walk over the bodies in input order
  // (the seeds' run without their sort), in groups of consecutive bodies.
  bool tree_input_order_walk = false;
  int block_size = 0;          // GPU: threads per block; 0 = the kernel's default
  bool deterministic = false;  // GPU: bit-identical results run after run (no kernel whose
                               // floating-point atomics make the sum order vary)
  // Several ranks that own their bodies (docs/distributed.md): a rank owns at most this many
  // (the domain cuts' memory cap); 0: no cap.
  std::size_t max_bodies_per_rank = 0;
};

/// The checks that need no solver: G finite, softening finite and >= 0,
/// theta finite and >= 0, dim 2 or 3, threads and block_size >= 0. Throws nbody::Error
/// naming the command-line option (the messages of `nbody run`); make_gravity_solver()
/// calls it first, and so does the Python module before it rebuilds a simulation. Kernels
/// and block sizes depend on the device: make_gravity_solver() checks those.
void validate(const GravityOptions& options);

/// The threads a CPU run of n bodies (per process) takes when --threads is 0: one where a
/// force evaluation is too small to share, else 0 (all of OpenMP's). A team pays a barrier
/// per evaluation, and on a machine whose cores are busy with other work a barrier can wait
/// for a descheduled thread (a scheduler quantum, milliseconds), so a small run with two
/// threads ran 1.4-4x slower than with one (measured on the 2-core CPU against two busy
/// processes: docs/performance.md). Serial: the direct sum below kSerialDirectBodies, the
/// tree below kSerialTreeBodies. Results do not depend on the threads (the kernels' sums
/// are fixed per body), so the choice changes only the time.
inline constexpr std::size_t kSerialDirectBodies = 2048;
inline constexpr std::size_t kSerialTreeBodies = 4096;
[[nodiscard]] int default_threads(const GravityOptions& options, std::size_t n);

/// What a solver did in its last evaluation, for benchmarks and the accuracy tool.
struct SolverStats {
  double interactions_per_body = 0;  // pair + cell interactions, averaged over bodies
  double build_seconds = 0;          // tree solvers: bounding box + build + summarise
  double walk_seconds = 0;           // tree solvers: the force walk; GPU solvers: kernel time
  /// build_seconds split, where the build times its parts (the CPU insertion build, named
  /// as the GPU's stages: build = cube, keys and insertion; sort = the layout; summarise =
  /// moments and groups); empty: build_seconds is one stage.
  std::vector<std::pair<std::string, double>> build_stages;
};

/// Share `part` of `parts` of n items, as contiguous and equal as can be: [first, last).
struct ShareRange {
  std::size_t first, last;
};
[[nodiscard]] inline ShareRange share_range(std::size_t n, int part, int parts) {
  return {n * std::size_t(part) / std::size_t(parts),
          n * std::size_t(part + 1) / std::size_t(parts)};
}

class GravitySolver {
 public:
  virtual ~GravitySolver() = default;
  /// Short name for logs and benchmarks, e.g. "direct-simd-float".
  [[nodiscard]] virtual std::string name() const = 0;
  /// Overwrites ps.ax, ps.ay, ps.az with the accelerations at the current positions and
  /// marks them valid. With `potential`, also ps.potential (resized to N) with each body's
  /// potential phi_i = -G sum_{j != i} m_j / sqrt(r_ij^2 + eps^2) as this solver sees it
  /// (the tree: from the cells it accepted, monopole or quadrupole), computed in the same
  /// pass as the accelerations, and marks the potentials valid; without, leaves
  /// ps.potential as it was and marks it invalid.
  virtual void compute_forces(ParticleSystem& ps, bool potential) = 0;
  /// The accelerations alone.
  void compute_accelerations(ParticleSystem& ps) { compute_forces(ps, false); }
  /// Hierarchical time steps: compute_forces() for the bodies listed in `active` (indices
  /// into ps, ascending, no repeats) only: their accelerations, and with `potential` their
  /// potentials, from all the bodies at the current positions; every other body's entries
  /// stay as they were, and the validity flags are not changed (the others keep the
  /// accelerations of their own last evaluation). With set_share(): this process's share
  /// of the active bodies, with exact zeros at the other active entries. The default
  /// computes every body and keeps the active ones (correct, not cheaper); the CPU direct
  /// sum and tree compute the active bodies alone.
  virtual void compute_forces_active(ParticleSystem& ps, bool potential,
                                     const std::vector<std::uint32_t>& active);
  /// Statistics of the last compute_accelerations() (zeros where not applicable).
  [[nodiscard]] virtual SolverStats stats() const { return {}; }
  /// Several processes (distributed.hpp): from now on compute the accelerations (and
  /// potentials) of share `part` of `parts` of the bodies only, with exact zeros for the others, so
  /// that the sum over the parts is the whole result, each body's acceleration computed by one part
  /// exactly as one process computes it. Returns false when this solver cannot split its
  /// work (it then computes every body, and the caller must not sum).
  virtual bool set_share(int part, int parts) { return parts == 1 && part == 0; }
};

/// Builds the solver the options ask for; throws nbody::Error for an unknown or
/// unavailable combination, naming the option and value. GravityAlgorithm::None, or
/// G == 0 with any algorithm, gives the solver of no gravity: zero accelerations and
/// potentials at O(N) cost.
[[nodiscard]] std::unique_ptr<GravitySolver> make_gravity_solver(const GravityOptions& options);

/// Names of the kernels of the CPU direct sum (for help texts): "fast", "scalar".
[[nodiscard]] std::vector<std::string> cpu_direct_kernels();
/// Names of the kernels of the GPU direct sum (device == Gpu): "fast", "tiled", "naive".
[[nodiscard]] std::vector<std::string> gpu_direct_kernels();

}  // namespace nbody
