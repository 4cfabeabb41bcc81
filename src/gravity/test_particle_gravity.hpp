#pragma once
// Test particles on the CPU (REBOUND's N_active, particles.hpp): any solver computes the
// active bodies' forces among themselves, a float64 direct sum adds what the test
// particles feel from the active bodies (and with type 1 what the active bodies feel from
// them). The force work is O(N * n_active).
#include <cstdint>
#include <memory>
#include <vector>

#include "nbody/gravity.hpp"

namespace nbody {

/// Adds to the accelerations (and with `potential` the potentials) of targets
/// [targets.first, targets.last) of ps those of the bodies [sources.first, sources.last),
/// G and the softening included, in float64 with the direct sum's SIMD kernel (OpenMP over
/// blocks of targets when `threads` allows). The two ranges must not overlap. With parts >
/// 1 only share `part` of the targets is computed (the others are left as they are).
void add_forces_from(ParticleSystem& ps, ShareRange targets, ShareRange sources, double G,
                     double softening, int threads, bool potential, int part = 0, int parts = 1);
/// The same for the targets listed (indices into ps, none a source).
void add_forces_from(ParticleSystem& ps, const std::vector<std::uint32_t>& targets,
                     ShareRange sources, double G, double softening, int threads, bool potential,
                     int part = 0, int parts = 1);

/// `inner` with test particles: bodies [0, n_active) by `inner` (on a copy of them alone,
/// so their forces are those of a run without the test particles), the test particles by
/// add_forces_from(); without test particles, `inner` itself.
[[nodiscard]] std::unique_ptr<GravitySolver> with_test_particles(
    std::unique_ptr<GravitySolver> inner, const GravityOptions& options);

}  // namespace nbody
