#pragma once
// An RGB8 picture and its PNG writer: what `nbody render` produces for every frame (and what
// `nbody view --screenshot` can save).
#include <cstddef>
#include <filesystem>
#include <vector>

namespace nbody::render {

struct Image {
  int width = 0, height = 0;
  std::vector<unsigned char> rgb;  // row-major from the top row, 3 bytes per pixel

  Image() = default;
  Image(int w, int h) : width(w), height(h), rgb(std::size_t(w) * std::size_t(h) * 3, 0) {}
  [[nodiscard]] unsigned char* pixel(int x, int y) {
    return rgb.data() + (std::size_t(y) * std::size_t(width) + std::size_t(x)) * 3;
  }
  [[nodiscard]] const unsigned char* pixel(int x, int y) const {
    return rgb.data() + (std::size_t(y) * std::size_t(width) + std::size_t(x)) * 3;
  }
};

/// True when this build can write PNG (it found stb_image_write, Debian libstb-dev).
[[nodiscard]] bool png_supported();

/// Writes the image as PNG, atomically (temporary file, then rename). Throws nbody::Error
/// naming the path on failure, or saying so when the build has no PNG writer.
void write_png(const std::filesystem::path& path, const Image& image);

}  // namespace nbody::render
