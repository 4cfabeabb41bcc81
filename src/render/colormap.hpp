#pragma once
// Colours for bodies, shared by `nbody render` and `nbody view`.
#include <string>
#include <vector>

#include "nbody/particles.hpp"

namespace nbody::render {

struct Rgb {
  unsigned char r, g, b;
};

/// A perceptual map (tabulated 'inferno', linear interpolation); t is clamped to [0, 1].
/// Perceptual so that equal steps in value read as equal steps in brightness.
Rgb colormap(double t);

enum class ColorBy { Speed, Mass };

/// "speed" | "mass"; throws nbody::Error naming --color otherwise.
[[nodiscard]] ColorBy parse_color_by(const std::string& name);

/// Per-body values in [0,1]: speed or log(mass), scaled between the 1st and 99th percentile
/// (robust to outliers). All 0.5 when every body has the same value.
[[nodiscard]] std::vector<float> color_values(const ParticleSystem& ps, ColorBy by);

/// The raw quantity mapped to 0 and 1: speed, or log(mass) for ColorBy::Mass.
struct ColorRange {
  double lo = 0, hi = 0;
};
/// The 1st and 99th percentile of the quantity (what color_values(ps, by) scales by).
[[nodiscard]] ColorRange color_range(const ParticleSystem& ps, ColorBy by);
/// Values scaled by a range fixed earlier (a movie keeps the first frame's range, so that a
/// colour means the same speed in every frame); clamped to [0, 1], 0.5 when lo == hi.
[[nodiscard]] std::vector<float> color_values(const ParticleSystem& ps, ColorBy by,
                                              const ColorRange& range);
/// The name of the quantity ("speed", "mass") and a range value in its units (mass undoes
/// the log), for legends.
[[nodiscard]] const char* color_by_name(ColorBy by);
[[nodiscard]] double color_range_value(ColorBy by, double raw);

}  // namespace nbody::render
