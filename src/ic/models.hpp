#pragma once
// The individual initial-condition models behind nbody::generate(). Private to src/ic:
// generate.cpp validates the options before calling any of these, so they assume
// sane values (n > 0 where used, positive sizes, 0 <= e < 1, ...).
#include <cstddef>

#include "ic/random.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/particles.hpp"

namespace nbody::ic {

// ---- The models (each returns bodies with masses, positions and velocities set;
// ---- generate() assigns ids, radii and the planar projection afterwards). ----------

/// n bodies uniform in [-size, size]^3, equal masses, velocities uniform in [-v, v]^3.
[[nodiscard]] ParticleSystem uniform_cube(const ModelOptions& o, Random& rng);
/// n bodies uniform in the ball of radius size, otherwise as uniform_cube.
[[nodiscard]] ParticleSystem uniform_sphere(const ModelOptions& o, Random& rng);
/// uniform_sphere with zero velocities (the classic cold-collapse test).
[[nodiscard]] ParticleSystem cold_sphere(const ModelOptions& o, Random& rng);
/// Plummer sphere in Henon units (M = 1, E = -1/4), Aarseth-Henon-Wielen sampling.
[[nodiscard]] ParticleSystem plummer(const ModelOptions& o, Random& rng);
/// Two bodies on a Kepler orbit (a, e), starting at pericentre; no randomness.
[[nodiscard]] ParticleSystem kepler(const ModelOptions& o, Random& rng);
/// The Chenciner-Montgomery figure-eight three-body choreography; no randomness.
[[nodiscard]] ParticleSystem figure_eight(const ModelOptions& o, Random& rng);
/// Two Plummer spheres of mass 1/2 each on a parabolic encounter.
[[nodiscard]] ParticleSystem two_clusters(const ModelOptions& o, Random& rng);
/// Central mass 1 plus a thin exponential disk on circular orbits.
[[nodiscard]] ParticleSystem exponential_disk(const ModelOptions& o, Random& rng);

// ---- Building blocks shared between models (and reachable from tests). ------------

/// Fills bodies [begin, begin + count) of ps (already sized) with a Plummer sphere
/// of total mass total_mass in Henon length units (virial radius 1 for any mass),
/// velocities set up for gravitational constant G, in its own centre-of-mass frame.
void fill_plummer(Random& rng, ParticleSystem& ps, std::size_t begin, std::size_t count,
                  double total_mass, double G);

/// Subtracts the mass-weighted mean position and velocity of bodies [begin, end).
void to_center_of_mass_frame(ParticleSystem& ps, std::size_t begin, std::size_t end);

/// Lower branch W_{-1} of the Lambert W function (w e^w = x, w <= -1) for x in
/// [-1/e, 0). Returns -1 at or below the branch point and -inf at x = 0.
[[nodiscard]] double lambert_w_minus1(double x);

}  // namespace nbody::ic
