#pragma once
// One force evaluation on bodies already in device memory, whatever the algorithm: the
// direct sum (DirectForces, direct_kernels.cuh) or the Barnes-Hut tree (TreeForces,
// tree/cuda/tree_gpu.cuh). The per-call solver (DeviceForcesSolver,
// device_forces_solver.cuh) fills bodies() from the host; the resident stepper
// (simulation/cuda) fills it on the device and keeps everything there.
#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/cuda/vec4.cuh"
#include "nbody/distributed.hpp"

namespace nbody::cuda_gravity {

template <class Real>
class DeviceForces {
 public:
  virtual ~DeviceForces() = default;
  /// Entries bodies() and out() hold for n bodies (padding has mass 0).
  [[nodiscard]] virtual std::size_t padded(std::size_t n) const = 0;
  /// Throws nbody::Error when the algorithm cannot take n bodies (too many for its
  /// indices); the per-call solver asks before reserve().
  virtual void check_size(std::size_t /*n*/) const {}
  /// Makes room for n bodies.
  virtual void reserve(std::size_t n) = 0;
  /// (x, y, z, m) of the bodies, in scaled units, padded(n) entries.
  [[nodiscard]] virtual gpu::Vec4<Real>* bodies() const = 0;
  /// The accelerations per unit G, in scaled units, in the order of bodies(); .w is the
  /// potential when the last launch() asked for it (see there), else unspecified.
  [[nodiscard]] virtual gpu::Vec4<Real>* out() const = 0;
  /// The tree's relative opening criterion reads every body's acceleration of the last
  /// evaluation: a device array of n entries for them, which the caller fills (on the
  /// launch's stream, body order) with |a| / G in the scaled units of the coming launch's
  /// out() (the physical |a| / (G 2^(q - 2p))), for the next launch() or launch_active()
  /// alone. Null when the algorithm has no use for them. Call it only when the caller has
  /// them (the same n as its last evaluation): without, the tree opens by theta.
  [[nodiscard]] virtual Real* old_accelerations(std::size_t n) {
    (void)n;
    return nullptr;
  }
  /// Evaluates the forces of n bodies on `stream` (eps: scaled softening). With
  /// `potential`, in the same pass out()[i].w = the potential of body i per unit G in the
  /// scaled units, -sum_{j != i} m_j / sqrt(r_ij^2 + eps^2) over scaled masses and positions
  /// (the tree: from the cells it accepted, monopole or quadrupole), in body order like the
  /// accelerations: the caller multiplies by G * 2^(mass_exponent - position_exponent) for
  /// physical units. Without, .w is unspecified (the kernels that run then are the
  /// acceleration-only ones). The accelerations have the same bits either way.
  virtual void launch(std::size_t n, Real eps, cudaStream_t stream, bool potential) = 0;
  /// Hierarchical time steps: launch() for the n_active bodies listed in `active` (a
  /// device array of body indices, ascending, no repeats) only: out()[active[k]] holds
  /// their accelerations (with `potential` their potentials in .w) from all n bodies as
  /// sources; every other entry of out() is unspecified. With set_share(): this process's
  /// share of the active bodies, exact zeros at the other active entries, so that
  /// exchange() makes the active entries whole. The default computes every body
  /// (correct, not cheaper); the direct sum and the tree compute the active bodies alone.
  virtual void launch_active(std::size_t n, Real eps, cudaStream_t stream, bool potential,
                             const unsigned* active, std::size_t n_active) {
    (void)active;
    (void)n_active;
    launch(n, eps, stream, potential);
  }
  /// Hierarchical time steps, `ok`: the next launch_active() alone may refit what the last
  /// launch built instead of building it anew (the tree: its cells' boxes and moments updated
  /// bottom-up at the bodies' new places, with the same order and cells); the caller knows the
  /// n bodies are the same ones, in the same order and scaling, as at that build. A launch()
  /// clears it. The other algorithms ignore it.
  virtual void allow_refit(bool ok) { (void)ok; }
  /// E.g. "direct-cuda-fast" or "tree-cuda-octree".
  [[nodiscard]] virtual std::string name() const = 0;
  /// Milliseconds per stage of the last launch, in pipeline order; call after the stream
  /// was synchronised. Empty for one-kernel algorithms.
  [[nodiscard]] virtual std::vector<std::pair<std::string, double>> stage_ms() const { return {}; }
  /// Several processes (distributed.hpp): compute share `part` of `parts` of the work from
  /// now on, leaving out() at exactly 0 where other shares add theirs; the sum of out()
  /// over the shares is the whole result. False when the algorithm cannot split its work.
  virtual bool set_share(int part, int parts) { return parts == 1 && part == 0; }
  /// After launch() of a share: makes out() the whole result on every process, the
  /// potentials in .w included when that launch computed them. By default one all-reduce
  /// (sum) of out(), .w included (a share leaves exact zeros in .w as in .x-.z where others
  /// add theirs); algorithms whose shares do not overlap may send less.
  virtual void exchange(ForceReducer& reducer, std::size_t n, cudaStream_t stream) {
    reducer.sum_device(out(), 4 * padded(n), std::is_same_v<Real, double>, stream);
  }
  /// Interactions per body of the last launch (after synchronisation), 0 if not counted.
  [[nodiscard]] virtual double interactions_per_body() const { return 0; }
};

}  // namespace nbody::cuda_gravity
