#pragma once
// The direct sum when every rank owns its bodies (docs/distributed.md): the ranks stand in
// a ring, and blocks of sources travel around it. Each rank packs its own bodies once, then
// P times: its bodies (the targets) take the forces of the block in hand, and the block
// moves one rank on (P - 1 exchanges a step). A rank holds its own bodies and one block,
// never all N; the forces are the full sum over all N sources, in the same kernel as one
// process (gravity/direct_simd_kernels.hpp), so the accelerations agree with one process's
// to the rounding of the order the blocks are added in.
#include <cstdint>
#include <memory>

#include "nbody/distributed.hpp"
#include "nbody/gravity.hpp"
#include "nbody/particles.hpp"

namespace nbody::parallel {

/// What the last evaluation moved and computed on this rank.
struct RingStats {
  std::uint64_t bytes_sent = 0;  // the travelling blocks this rank passed on
  std::uint64_t pairs = 0;       // kernel pair evaluations (padding targets included)
};

class DirectRing {
 public:
  virtual ~DirectRing() = default;
  /// The accelerations (and with `potential` the potentials) of the local bodies of `ps`
  /// from every rank's bodies, G included; collective (every rank of `comm` calls it).
  virtual void compute_forces(ParticleSystem& ps, bool potential, ForceReducer& comm) = 0;
  [[nodiscard]] virtual RingStats stats() const = 0;
};

/// The ring in float or double arithmetic (Precision::Auto is double, as the direct sum's),
/// with `threads` OpenMP threads (0: OpenMP's default).
[[nodiscard]] std::unique_ptr<DirectRing> make_direct_ring(Precision precision, double G,
                                                           double softening, int threads);

}  // namespace nbody::parallel
