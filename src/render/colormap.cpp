#include "render/colormap.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "nbody/error.hpp"

namespace nbody::render {
namespace {

// matplotlib's 'inferno' sampled at 16 even steps over [0.15, 1]: perceptually uniform with
// monotone luminance, and starting above its near-black low end so that the slowest or
// lightest bodies still show on a black background.
constexpr Rgb kInferno[] = {
    {43, 11, 87},   {68, 10, 104},  {92, 18, 110},   {114, 26, 110},  {138, 34, 106}, {160, 42, 99},
    {183, 53, 87},  {203, 65, 73},  {222, 82, 56},   {235, 102, 40},  {246, 126, 20}, {251, 151, 6},
    {252, 180, 24}, {248, 207, 58}, {241, 236, 109}, {252, 255, 164},
};
constexpr std::size_t kStops = sizeof(kInferno) / sizeof(kInferno[0]);

unsigned char mix(unsigned char a, unsigned char b, double f) {
  return static_cast<unsigned char>(std::lround(a + (b - a) * f));
}

// Value at fraction q of the sorted values (nearest rank; `values` is reordered).
double percentile(std::vector<double>& values, double q) {
  const auto index =
      static_cast<std::size_t>(std::lround(q * static_cast<double>(values.size() - 1)));
  const auto it = values.begin() + static_cast<std::ptrdiff_t>(index);
  std::nth_element(values.begin(), it, values.end());
  return *it;
}

// Speed, or log(mass): masses span decades (stars and planets), and a log scale spreads
// them over the map. Massless test particles give -inf.
double raw_value(const ParticleSystem& ps, ColorBy by, std::size_t i) {
  if (by == ColorBy::Speed) {
    return std::sqrt(ps.vx[i] * ps.vx[i] + ps.vy[i] * ps.vy[i] + ps.vz[i] * ps.vz[i]);
  }
  return ps.mass[i] > 0 ? std::log(ps.mass[i]) : -HUGE_VAL;
}

}  // namespace

Rgb colormap(double t) {
  if (!(t > 0)) t = 0;  // also catches NaN
  if (t > 1) t = 1;
  const double position = t * static_cast<double>(kStops - 1);
  const auto i = std::min(static_cast<std::size_t>(position), kStops - 2);
  const double f = position - static_cast<double>(i);
  const Rgb& a = kInferno[i];
  const Rgb& b = kInferno[i + 1];
  return {mix(a.r, b.r, f), mix(a.g, b.g, f), mix(a.b, b.b, f)};
}

ColorBy parse_color_by(const std::string& name) {
  if (name == "speed") return ColorBy::Speed;
  if (name == "mass") return ColorBy::Mass;
  throw Error("--color: unknown value '" + name + "' (expected speed or mass)");
}

ColorRange color_range(const ParticleSystem& ps, ColorBy by) {
  std::vector<double> finite;
  finite.reserve(ps.size());
  for (std::size_t i = 0; i < ps.size(); ++i) {
    const double v = raw_value(ps, by, i);
    if (std::isfinite(v)) finite.push_back(v);
  }
  if (finite.empty()) return {};
  const double lo = percentile(finite, 0.01);
  return {lo, percentile(finite, 0.99)};
}

std::vector<float> color_values(const ParticleSystem& ps, ColorBy by, const ColorRange& range) {
  const std::size_t n = ps.size();
  std::vector<float> values(n, 0.5f);
  if (!(range.hi > range.lo)) return values;  // all alike: one mid colour
  for (std::size_t i = 0; i < n; ++i) {
    const double v = raw_value(ps, by, i);
    // Non-finite: massless bodies (log 0) and NaN speeds sit at the bottom of the scale.
    const double t = std::isfinite(v) ? (v - range.lo) / (range.hi - range.lo) : 0.0;
    values[i] = static_cast<float>(std::clamp(t, 0.0, 1.0));
  }
  return values;
}

std::vector<float> color_values(const ParticleSystem& ps, ColorBy by) {
  return color_values(ps, by, color_range(ps, by));
}

const char* color_by_name(ColorBy by) {
  return by == ColorBy::Speed ? "speed" : "mass";
}

double color_range_value(ColorBy by, double raw) {
  return by == ColorBy::Mass ? std::exp(raw) : raw;
}

}  // namespace nbody::render
