// The Sun and the four giant planets with a disc of test particles: G = 1, solar masses and
// au (a year is 2 pi), the planets on circular orbits in the plane at their mean distances,
// then n - 5 massless bodies on circular orbits around the Sun, uniform in radius from 1 to
// 40 au and in azimuth, a little above or below the plane (|z| < 1 % of the radius). The
// massless bodies come last, so they are test particles (particles.hpp): a debris disc
// whose force work is 5 n.
#include <cmath>
#include <numbers>

#include "ic/models.hpp"
#include "ic/parallel.hpp"

namespace nbody::ic {

void giants(const ModelOptions& o, Bodies& b) {
  // Jupiter, Saturn, Uranus, Neptune: masses in solar masses, semi-major axes in au.
  constexpr double kMass[] = {1.0, 9.548e-4, 2.858e-4, 4.366e-5, 5.151e-5};
  constexpr double kRadius[] = {0.0, 5.203, 9.537, 19.19, 30.07};
  constexpr std::size_t kPlanets = 5;
  ParticleSystem& ps = b.ps;
  const double s = std::sqrt(o.G);  // circular speeds scale with sqrt(G)
  const auto [p_lo, p_hi] = b.clip(0, kPlanets);
  for (std::size_t i = p_lo; i < p_hi; ++i) {
    const double r = kRadius[i], phase = 0.7 * double(i - 1), v = r > 0 ? s / std::sqrt(r) : 0;
    set_body(ps, i - b.first, {r * std::cos(phase), r * std::sin(phase), 0},
             {-v * std::sin(phase), v * std::cos(phase), 0}, kMass[i]);
  }
  const auto [lo, hi] = b.clip(kPlanets, o.n);
  for_each_body(o.threads, lo, hi, [&](std::size_t i) {
    Random rng(o.seed, i);
    const double r = 1.0 + 39.0 * rng.uniform();
    const double phi = 2.0 * std::numbers::pi * rng.uniform();
    const double z = 0.02 * r * (rng.uniform() - 0.5);
    const double v = s / std::sqrt(r);
    set_body(ps, i - b.first, {r * std::cos(phi), r * std::sin(phi), z},
             {-v * std::sin(phi), v * std::cos(phi), 0}, 0.0);
  });
}

}  // namespace nbody::ic
