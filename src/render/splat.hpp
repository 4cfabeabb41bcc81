#pragma once
// The software renderer of `nbody render`: a CPU point splatter, so pictures and movies need
// no display, no OpenGL and no GPU. Bodies are drawn additively on black and the sum saturates
// per channel, so dense regions glow brighter than lone bodies, whatever the drawing order.
#include <string>
#include <vector>

#include "nbody/particles.hpp"
#include "render/camera.hpp"
#include "render/colormap.hpp"
#include "render/image.hpp"

namespace nbody::render {

/// Draws the bodies as seen by `camera` on a black camera.width x camera.height image.
/// values[i] in [0, 1] picks body i's colour (colormap). A body with a radius is a disc of
/// max(1 px, projected radius); a body without one is a soft dot about 3 px across.
[[nodiscard]] Image splat_bodies(const ParticleSystem& ps, const Camera& camera,
                                 const std::vector<float>& values);

/// Draws the colour scale in the bottom-right corner: a strip of the map with the quantity's
/// name and the values at its ends (labels only when the build has stb's font).
void draw_legend(Image& image, ColorBy by, const ColorRange& range);

/// Writes `text` (the frame's simulated time, "t = 1.25") in the top-left corner, in the
/// legend's font and colour, so that frames and movies say when they show.
void draw_corner_label(Image& image, const std::string& text);

}  // namespace nbody::render
