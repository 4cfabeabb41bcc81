// The colour-scale legend (a strip of the colour map) and the time label of rendered frames,
// with text drawn by stb_easy_font (a tiny vector font of axis-aligned quads, so it
// rasterises without a font file or a text library).
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "render/splat.hpp"

#if NBODY_HAVE_STB
#include <stb/stb_easy_font.h>
#endif

namespace nbody::render {
namespace {

void fill_rect(Image& image, int x0, int y0, int x1, int y1, const Rgb& colour) {
  x0 = std::max(x0, 0);
  y0 = std::max(y0, 0);
  x1 = std::min(x1, image.width);
  y1 = std::min(y1, image.height);
  for (int y = y0; y < y1; ++y) {
    for (int x = x0; x < x1; ++x) {
      unsigned char* p = image.pixel(x, y);
      p[0] = colour.r;
      p[1] = colour.g;
      p[2] = colour.b;
    }
  }
}

#if NBODY_HAVE_STB
// Width of the text in font units (characters are about 6 units wide and 7 tall).
int text_width(const std::string& text) {
  std::vector<char> buffer(text.begin(), text.end());
  buffer.push_back('\0');
  return stb_easy_font_width(buffer.data());
}

// Draws text with its top-left corner at (x, y), each font unit `scale` pixels.
void draw_text(Image& image, int x, int y, int scale, const std::string& text) {
  std::vector<char> buffer(text.begin(), text.end());
  buffer.push_back('\0');
  // 4 vertices per quad, 16 bytes each (x, y, z as float, then RGBA); ~70 quads per character
  // at most.
  std::vector<char> vertices(text.size() * 70 * 4 * 16 + 64);
  unsigned char white[4] = {255, 255, 255, 255};
  const int quads = stb_easy_font_print(0, 0, buffer.data(), white, vertices.data(),
                                        static_cast<int>(vertices.size()));
  for (int q = 0; q < quads; ++q) {
    float corner[2][2];  // opposite corners: vertex 0 and vertex 2 of the quad
    std::memcpy(corner[0], vertices.data() + (q * 4 + 0) * 16, 2 * sizeof(float));
    std::memcpy(corner[1], vertices.data() + (q * 4 + 2) * 16, 2 * sizeof(float));
    fill_rect(image, x + static_cast<int>(corner[0][0] * static_cast<float>(scale)),
              y + static_cast<int>(corner[0][1] * static_cast<float>(scale)),
              x + static_cast<int>(corner[1][0] * static_cast<float>(scale)),
              y + static_cast<int>(corner[1][1] * static_cast<float>(scale)), {220, 220, 220});
  }
}
#endif

}  // namespace

void draw_legend(Image& image, ColorBy by, const ColorRange& range) {
  if (image.width < 64 || image.height < 64) return;  // no room: the bodies matter more
  const int margin = std::max(4, image.height / 40);
  const int bar_height = std::max(4, image.height / 80);
  const int x0 = image.width * 6 / 10, x1 = image.width - margin;
  const int y1 = image.height - margin, y0 = y1 - bar_height;
  fill_rect(image, x0 - 1, y0 - 1, x1 + 1, y1 + 1, {128, 128, 128});  // a thin frame
  for (int x = x0; x < x1; ++x) {
    fill_rect(image, x, y0, x + 1, y1, colormap(double(x - x0) / std::max(1, x1 - x0 - 1)));
  }
#if NBODY_HAVE_STB
  const int scale = std::max(1, image.height / 400);  // font units to pixels
  // Labels above the strip: the lowest value at its left end, the highest at its right end,
  // and the quantity's name on a line above them (or name = value when all bodies are alike).
  const int line = 4 + 8 * scale;
  const std::string name = by == ColorBy::Mass ? "mass (log scale)" : color_by_name(by);
  const std::string lo = fmt::format("{:.3g}", color_range_value(by, range.lo));
  const std::string hi = fmt::format("{:.3g}", color_range_value(by, range.hi));
  if (!(range.hi > range.lo)) {
    const std::string label = std::string(color_by_name(by)) + " = " + lo;
    draw_text(image, (x0 + x1 - text_width(label) * scale) / 2, y0 - line, scale, label);
    return;
  }
  draw_text(image, x0, y0 - line, scale, lo);
  draw_text(image, x1 - text_width(hi) * scale, y0 - line, scale, hi);
  draw_text(image, (x0 + x1 - text_width(name) * scale) / 2, y0 - 2 * line, scale, name);
#else
  (void)by;
  (void)range;
#endif
}

void draw_corner_label(Image& image, const std::string& text) {
  if (image.width < 64 || image.height < 64 || text.empty()) return;  // as the legend
#if NBODY_HAVE_STB
  const int margin = std::max(4, image.height / 40);
  // Twice the legend's size: the time is read from a moving picture, often scaled down.
  const int scale = 2 * std::max(1, image.height / 400);
  draw_text(image, margin, margin, scale, text);
#else
  (void)text;
#endif
}

}  // namespace nbody::render
