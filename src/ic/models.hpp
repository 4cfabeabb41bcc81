#pragma once
// The individual initial-condition models behind nbody::generate(). Private to src/ic:
// generate.cpp validates the options before calling any of these, so they assume
// sane values (n > 0 where used, positive sizes, 0 <= e < 1, ...).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numbers>
#include <utility>

#include "ic/random.hpp"
#include "nbody/distributed.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/particles.hpp"

namespace nbody::ic {

/// The bodies a model draws: the window [first, first + ps.size()) of its bodies (all of
/// them: first 0). Body i is drawn into ps at i - first from Random(seed, i) alone, and the
/// model's sums over bodies (its centre of mass) are exact (exact_sum.hpp) and completed by
/// `group` (the ranks that draw the other windows; collective), so a window's bodies have
/// the bits the whole model's bodies have (generate_window).
struct Bodies {
  ParticleSystem ps;
  std::size_t first = 0;
  ForceReducer* group = nullptr;
  /// [begin, end) of the model's indices, cut to the window (empty: lo == hi).
  [[nodiscard]] std::pair<std::size_t, std::size_t> clip(std::size_t begin, std::size_t end) const {
    const std::size_t lo = std::max(begin, first), hi = std::min(end, first + ps.size());
    return {lo, std::max(lo, hi)};
  }
};

// ---- The models (each sets the masses, positions and velocities of b's window;
// ---- generate() assigns ids, radii and the planar projection afterwards). Body i draws
// ---- its numbers from Random(o.seed, i) alone, and the bodies are drawn on
// ---- o.threads OpenMP threads (parallel.hpp): the same bodies for any thread count and
// ---- any window. kepler and figure_eight make their two or three bodies whole. -----

/// n bodies uniform in [-size, size]^3, equal masses, velocities uniform in [-v, v]^3.
void uniform_cube(const ModelOptions& o, Bodies& b);
/// n bodies uniform in the ball of radius size, otherwise as uniform_cube.
void uniform_sphere(const ModelOptions& o, Bodies& b);
/// uniform_sphere with zero velocities (the classic cold-collapse test).
void cold_sphere(const ModelOptions& o, Bodies& b);
/// Plummer sphere in Henon units (M = 1, E = -1/4), Aarseth-Henon-Wielen sampling.
void plummer(const ModelOptions& o, Bodies& b);
/// Hernquist sphere (G = M = a = 1) truncated at o.rmax, speeds from its isotropic f(E).
void hernquist(const ModelOptions& o, Bodies& b);
/// NFW halo (G = M = r_s = 1) truncated at c r_s, Gaussian velocities from the Jeans equation.
void nfw(const ModelOptions& o, Bodies& b);
/// Two bodies on a Kepler orbit (a, e), starting at pericentre; no randomness.
[[nodiscard]] ParticleSystem kepler(const ModelOptions& o);
/// The Chenciner-Montgomery figure-eight three-body choreography; no randomness.
[[nodiscard]] ParticleSystem figure_eight(const ModelOptions& o);
/// Two Plummer spheres of mass 1/2 each on a parabolic encounter.
void two_clusters(const ModelOptions& o, Bodies& b);
/// Central mass 1 plus a thin exponential disk on circular orbits.
void exponential_disk(const ModelOptions& o, Bodies& b);
/// The Sun and the four giant planets, then n - 5 massless test particles (1 to 40 au).
void giants(const ModelOptions& o, Bodies& b);

// ---- Building blocks shared between models (and reachable from tests). ------------

/// Throws nbody::Error naming -n and the bytes needed when n bodies' arrays alone would
/// exceed the machine's physical memory (before anything is allocated).
void check_memory_for(std::size_t n);

/// n bodies with every array zero. The arrays are allocated (and their pages first
/// written) on several threads at once, one array each, which at 10^8 bodies takes a
/// fraction of the time of ParticleSystem::resize alone.
[[nodiscard]] ParticleSystem allocate(std::size_t n, int threads);

/// Fills bodies [begin, begin + count) of the model (those in b's window) with a Plummer
/// sphere of total mass total_mass in Henon length units (virial radius 1 for any mass),
/// velocities set up for gravitational constant o.G, in its own centre-of-mass frame.
/// Body i is drawn from Random(o.seed, i).
void fill_plummer(const ModelOptions& o, Bodies& b, std::size_t begin, std::size_t count,
                  double total_mass);

/// A vector of length r in a uniformly random direction (two draws): by Archimedes'
/// hat-box theorem z uniform in [-r, r] and an azimuth uniform in [0, 2 pi) cover the
/// sphere evenly.
inline Vec3 isotropic(Random& rng, double r) {
  const double z = (1.0 - 2.0 * rng.uniform()) * r;
  // |z| <= r holds after rounding too; the max only guards against a surprise.
  const double rho = std::sqrt(std::max(0.0, r * r - z * z));
  const double phi = 2.0 * std::numbers::pi * rng.uniform();
  return {rho * std::cos(phi), rho * std::sin(phi), z};
}

/// Body i of a sphere drawn in place: position, velocity, mass.
inline void set_body(ParticleSystem& ps, std::size_t i, const Vec3& pos, const Vec3& vel,
                     double m) {
  ps.x[i] = pos.x;
  ps.y[i] = pos.y;
  ps.z[i] = pos.z;
  ps.vx[i] = vel.x;
  ps.vy[i] = vel.y;
  ps.vz[i] = vel.z;
  ps.mass[i] = m;
}

/// Multiplies the velocities of bodies [begin, end) (those in b's window) by factor
/// (nothing when it is 1, so those bits are untouched): the spheres are drawn for G M = 1
/// and scaled by sqrt(G M).
void scale_velocities(Bodies& b, std::size_t begin, std::size_t end, double factor, int threads);

/// Subtracts the mass-weighted mean position and velocity of bodies [begin, end) from
/// those in b's window: exact sums (exact_sum.hpp) over the window, completed over every
/// window by b.group (collective), so the same bits for any thread and rank count.
void to_center_of_mass_frame(Bodies& b, std::size_t begin, std::size_t end, int threads);

/// Lower branch W_{-1} of the Lambert W function (w e^w = x, w <= -1) for x in
/// [-1/e, 0). Returns -1 at or below the branch point and -inf at x = 0.
[[nodiscard]] double lambert_w_minus1(double x);

}  // namespace nbody::ic
