#pragma once
// Initial-condition generators (`nbody gen MODEL`). Deterministic for a given seed:
// the same (model, n, seed, options) gives bit-identical bodies on every machine and for
// every thread count. Body i draws from its own counter-based random stream (Philox4x32-10
// keyed by the seed, counter = (draw, i); src/ic/random.hpp) through our own uniform and
// normal transforms, not std::*_distribution (whose output differs between standard
// libraries), and every sum (centre of mass, momentum) is exact, rounded once (Kulisch's
// long accumulator, src/ic/exact_sum.hpp). So the bodies are drawn in parallel (OpenMP),
// about 10^8 bodies in seconds, and a window of them by one rank alone (generate_window).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "nbody/particles.hpp"

namespace nbody {

class ForceReducer;

struct ModelOptions {
  std::string model = "plummer";
  std::size_t n = 1000;
  std::uint64_t seed = 1;
  double G = 1.0;             // gravitational constant the velocities are set up for
  double radius = 0.0;        // body radius written to every body (collision issue)
  double mass = 1.0;          // total mass (uniform-cube, uniform-sphere, cold-sphere)
  double size = 1.0;          // cube half-edge / sphere radius (uniform-*, cold-sphere)
  double velocity = 0.0;      // uniform-*: velocity components uniform in [-v, v]
  double e = 0.5;             // kepler eccentricity
  double a = 1.0;             // kepler semi-major axis
  double separation = 10.0;   // two-clusters: initial x offset of the centres
  double impact = 1.0;        // two-clusters: impact parameter (y offset of the centres)
  double disk_mass = 0.1;     // disk: total disk mass (central mass 1)
  double scale_length = 1.0;  // disk: exponential scale length Rd
  int dim = 3;                // 2: planar output (z = vz = 0)
  int threads = 0;            // OpenMP threads (0 = all available); the bodies do not depend on it
  // hernquist: truncation radius r_max in units of the scale length a
  double rmax = 100.0;
  // nfw: concentration c = r_200 / r_s (the halo is truncated at r_200)
  double concentration = 10.0;
};

/// Generates the model. Throws nbody::Error for an unknown model or bad option values.
[[nodiscard]] ParticleSystem generate(const ModelOptions& options);
/// The bodies [first, first + count) of generate(options), the same bits and ids, drawn
/// without the others: each body from its own random stream, the sums over all bodies (the
/// centre of mass) completed by `group`, collective: each of its ranks passes its own window,
/// the windows covering every body once. So no rank holds all N bodies. Without a group the
/// window must be every body. Throws nbody::Error as generate() does, and for a window past
/// the model's bodies.
[[nodiscard]] ParticleSystem generate_window(const ModelOptions& options, std::size_t first,
                                             std::size_t count, ForceReducer* group);
/// This rank's share of generate(options): the window share_range(model_bodies(options),
/// part, parts) of gravity.hpp, as generate_window draws it. Collective over `group`.
[[nodiscard]] ParticleSystem generate_share(const ModelOptions& options, ForceReducer& group);
/// How many bodies the model has: options.n, but 2 for kepler and 3 for figure-eight.
[[nodiscard]] std::size_t model_bodies(const ModelOptions& options);
/// Checks every parameter's range, whatever the model (not n, whose minimum depends on the
/// model): what generate() checks first, and the command line on each option it parses.
void validate(const ModelOptions& options);
[[nodiscard]] std::vector<std::string> model_names();

}  // namespace nbody
