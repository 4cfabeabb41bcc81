#pragma once
// Test particles on the device stepper (ParticleSystem::n_active): the run's force
// algorithm evaluates the active bodies [0, n_active) alone (packed as a system of their
// own: the bits of a run without the test particles), and these kernels add what the
// test particles feel from them and, with type 1, what the active bodies feel from the
// test particles. O(N * n_active), from the float64 state scaled as the packed bodies are.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/device_buffer.cuh"
#include "core/cuda/vec4.cuh"
#include "nbody/distributed.hpp"
#include "simulation/cuda/device_state.cuh"

namespace nbody::cuda_resident {

template <class Real>
struct TestParticleLaunch {
  State s;                                    // every body; s.n of them
  unsigned n_active = 0;                      // bodies [0, n_active) are active
  int type = 0;                               // 1: the test particles pull on the active bodies too
  double position_scale = 1, mass_scale = 1;  // the packed bodies' powers of two
  Real eps = 0;                               // scaled softening
  gpu::Vec4<Real>* out = nullptr;             // the force launch's results, body order
  bool potential = false;                     // .w: the potentials too
  // Block steps: the bodies listed (ascending device list of `listed` entries, of which
  // the first `listed_active` are active bodies); null: every body.
  const unsigned* listed = nullptr;
  unsigned n_listed = 0, listed_active = 0;
};

/// out[i] for the test particles (listed ones) = their forces from the active bodies
/// (per unit G, scaled units, .w the potential when asked); with type 1, out[i] of the
/// (listed) active bodies += the test particles' pull. `partial` is scratch.
template <class Real>
void launch_test_particle_forces(const TestParticleLaunch<Real>& t,
                                 gpu::DeviceBuffer<gpu::Vec4<Real>>& partial, cudaStream_t stream);

/// The number of entries of the ascending device list `listed` (n entries) below `bound`,
/// into *count (device); the caller copies it out.
void launch_count_below(const unsigned* listed, unsigned n, unsigned bound, unsigned* count,
                        cudaStream_t stream);

/// The device stepper's test particles: the state's n_active and type, what the force
/// algorithm takes, and the kernels' scratch. Every process of a replicated run computes
/// every test particle after the exchange of the active bodies' forces (no sum).
template <class Real>
class TestParticles {
 public:
  void set(std::size_t n_active, int type) {
    n_active_ = n_active;
    type_ = type;
  }
  [[nodiscard]] std::size_t n_active() const { return n_active_; }  // as the state's
  [[nodiscard]] int type() const { return type_; }
  /// The collision engine's BodyArrays::n_active: the first test particle's index.
  [[nodiscard]] unsigned first_test() const {
    return unsigned(std::min<std::size_t>(n_active_, 0xffffffffu));
  }
  /// After a collision stage that merged `gone` active bodies into others.
  void merged(std::size_t gone) {
    if (n_active_ != std::size_t(-1)) n_active_ -= std::min(gone, n_active_);
  }
  /// The bodies [0, sources(n)) the force algorithm evaluates.
  [[nodiscard]] std::size_t sources(std::size_t n) const { return std::min(n_active_, n); }
  /// Of the ascending device list `listed` (null: none), the entries below `sources`, the
  /// active bodies; n_listed when no body of the n is a test particle (else synchronises).
  unsigned listed_active(const unsigned* listed, std::size_t n_listed, std::size_t sources,
                         std::size_t n, cudaStream_t stream) {
    if (listed == nullptr || sources == n) return unsigned(n_listed);
    count_.reserve(1, "test particles' count");
    count_host_.reserve(1);
    launch_count_below(listed, unsigned(n_listed), unsigned(sources), count_.data(), stream);
    NBODY_CUDA_CHECK(cudaMemcpyAsync(count_host_.data(), count_.data(), sizeof(unsigned),
                                     cudaMemcpyDeviceToHost, stream));
    NBODY_CUDA_CHECK(cudaStreamSynchronize(stream));
    return *count_host_.data();
  }
  /// The force algorithm on the active bodies [0, t.n_active) (packed in forces.bodies()),
  /// launch() or with a list launch_active() of its active entries, their shares summed
  /// over `sharing` when given; then the test particles' kernels (listed_active filled).
  template <class Forces>
  void launch(Forces& forces, TestParticleLaunch<Real> t, ForceReducer* sharing,
              cudaStream_t stream) {
    const std::size_t ns = t.n_active;
    // Room for the plan of ns bodies (the direct sum's j-splits: reserve(N) of N >= 16384
    // bodies, each pair once, has no partial sums for a small launch).
    if (ns < t.s.n) forces.reserve(std::max<std::size_t>(ns, 1));
    t.listed_active = listed_active(t.listed, t.n_listed, ns, t.s.n, stream);
    if (t.listed && t.listed_active > 0)
      forces.launch_active(ns, t.eps, stream, t.potential, t.listed, t.listed_active);
    if (!t.listed && ns > 0) forces.launch(ns, t.eps, stream, t.potential);
    if (sharing && ns > 0) forces.exchange(*sharing, ns, stream);
    if (ns < t.s.n) launch_test_particle_forces(t, partial_, stream);
  }

 private:
  std::size_t n_active_ = std::size_t(-1);  // ParticleSystem::kAllActive
  int type_ = 0;
  gpu::DeviceBuffer<gpu::Vec4<Real>> partial_;
  gpu::DeviceBuffer<unsigned> count_;
  gpu::PinnedBuffer<unsigned> count_host_;
};

}  // namespace nbody::cuda_resident
