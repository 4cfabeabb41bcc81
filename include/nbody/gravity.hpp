#pragma once
// Gravity solvers: one interface, several implementations chosen at run time: direct
// summation (scalar reference, SIMD/OpenMP; CUDA) and the Barnes-Hut tree (CPU; CUDA).
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "nbody/particles.hpp"

namespace nbody {

/// Arithmetic of the force computation. Auto: float64 for the exact direct sum, float32
/// for the tree, whose truncation error (~1e-3 at theta 0.5) dwarfs float32 rounding
/// (~1e-7), as in GADGET and Bonsai.
enum class Precision { Auto, Float, Double };
enum class Device { Cpu, Gpu };

[[nodiscard]] std::string_view to_string(Precision p);
/// The precision Auto stands for with this algorithm ("direct" or "tree").
[[nodiscard]] Precision resolve_precision(Precision p, const std::string& algorithm);
[[nodiscard]] std::string_view to_string(Device d);
/// "auto", "float" or "double"; throws nbody::Error naming --precision otherwise.
[[nodiscard]] Precision parse_precision(std::string_view name);
/// "cpu" or "gpu"; throws nbody::Error naming --device otherwise.
[[nodiscard]] Device parse_device(std::string_view name);
[[nodiscard]] std::vector<std::string> precision_names();
[[nodiscard]] std::vector<std::string> device_names();
/// Names accepted by GravityOptions::algorithm: "direct", "tree".
[[nodiscard]] std::vector<std::string> gravity_algorithm_names();

struct GravityOptions {
  std::string algorithm = "direct";  // direct | tree
  std::string kernel = "fast";       // CPU direct: "fast" SIMD/OpenMP or "scalar" reference;
                                     // GPU direct: "fast", "tiled" or "naive"
  Device device = Device::Cpu;
  Precision precision = Precision::Auto;
  double G = 1.0;
  double softening = 0.0;  // Plummer epsilon
  int threads = 0;         // OpenMP threads; 0 = OpenMP's default
  double theta = 0.5;      // tree: opening angle (cell accepted when size/distance < theta)
  bool quadrupole = false; // tree: add quadrupole moments to cell interactions
  int dim = 3;             // 3: octree, 2: quadtree (tree solvers)
  int block_size = 0;      // GPU: threads per block; 0 = the kernel's default
  bool deterministic = false;  // GPU: bit-identical results run after run (no kernel whose
                               // floating-point atomics make the sum order vary)
};

/// The checks that need no solver: algorithm known, G finite, softening finite and >= 0,
/// theta finite and >= 0, dim 2 or 3, threads and block_size >= 0. Throws nbody::Error
/// naming the command-line option (the messages of `nbody run`); make_gravity_solver()
/// calls it first, and so does the Python module before it rebuilds a simulation. Kernel
/// names and block sizes depend on the device: make_gravity_solver() checks those.
void validate(const GravityOptions& options);

/// What a solver did in its last evaluation, for benchmarks and the accuracy tool.
struct SolverStats {
  double interactions_per_body = 0;  // pair + cell interactions, averaged over bodies
  double build_seconds = 0;          // tree solvers: bounding box + build + summarise
  double walk_seconds = 0;           // tree solvers: the force walk; GPU solvers: kernel time
};

/// Computes accelerations for every body of a particle system.
/// Share `part` of `parts` of n items, as contiguous and equal as can be: [first, last).
struct ShareRange {
  std::size_t first, last;
};
[[nodiscard]] inline ShareRange share_range(std::size_t n, int part, int parts) {
  return {n * std::size_t(part) / std::size_t(parts), n * std::size_t(part + 1) / std::size_t(parts)};
}

class GravitySolver {
 public:
  virtual ~GravitySolver() = default;
  /// Short name for logs and benchmarks, e.g. "direct-simd-float".
  [[nodiscard]] virtual std::string name() const = 0;
  /// Overwrites ps.ax, ps.ay, ps.az with the accelerations at the current positions.
  virtual void compute_accelerations(ParticleSystem& ps) = 0;
  /// Statistics of the last compute_accelerations() (zeros where not applicable).
  [[nodiscard]] virtual SolverStats stats() const { return {}; }
  /// Several processes (distributed.hpp): from now on compute the accelerations of share
  /// `part` of `parts` of the bodies only, with exact zeros for the others, so that the sum
  /// over the parts is the whole result, each body's acceleration computed by one part
  /// exactly as one process computes it. Returns false when this solver cannot split its
  /// work (it then computes every body, and the caller must not sum).
  virtual bool set_share(int part, int parts) { return parts == 1 && part == 0; }
};

/// Builds the solver the options ask for; throws nbody::Error for an unknown or
/// unavailable combination, naming the option and value.
[[nodiscard]] std::unique_ptr<GravitySolver> make_gravity_solver(const GravityOptions& options);

/// Names accepted by GravityOptions::kernel for the CPU direct sum.
[[nodiscard]] std::vector<std::string> cpu_direct_kernels();
/// Names accepted by GravityOptions::kernel for the GPU direct sum (device == Gpu).
[[nodiscard]] std::vector<std::string> gpu_direct_kernels();

}  // namespace nbody
