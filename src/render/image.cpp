#include "render/image.hpp"

#include <ostream>
#include <string>

#include "nbody/error.hpp"
#include "nbody/io.hpp"

#if NBODY_HAVE_STB
// The one translation unit that compiles stb_image_write (its functions are not static).
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb/stb_image_write.h>
#endif

namespace nbody::render {

#if NBODY_HAVE_STB

bool png_supported() {
  return true;
}

void write_png(const std::filesystem::path& path, const Image& image) {
  if (image.width <= 0 || image.height <= 0) {
    throw Error("cannot write " + path.string() + ": the image is empty");
  }
  write_file_atomically(path, [&](std::ostream& out) {
    // stb hands the encoded bytes to a callback, which appends them to the stream.
    auto append = [](void* context, void* data, int size) {
      static_cast<std::ostream*>(context)->write(static_cast<const char*>(data), size);
    };
    const int ok = stbi_write_png_to_func(append, &out, image.width, image.height, 3,
                                          image.rgb.data(), image.width * 3);
    if (!ok) throw Error("cannot encode " + path.string() + " as PNG");
  });
}

#else

bool png_supported() {
  return false;
}

void write_png(const std::filesystem::path& path, const Image&) {
  throw Error("cannot write " + path.string() +
              ": nbody was built without stb (PNG writer); install libstb-dev "
              "(scripts/setup.sh does) and rebuild");
}

#endif

}  // namespace nbody::render
