#include "nbody/input_error.hpp"

#include <fmt/format.h>

namespace nbody {

std::string printable(std::string_view text, std::size_t max_chars) {
  std::string out;
  std::size_t shown = 0;
  for (const char c : text) {
    if (shown >= max_chars) {
      out += fmt::format("... ({} bytes)", text.size());
      return out;
    }
    const auto byte = static_cast<unsigned char>(c);
    if (byte == '\\') {
      out += "\\\\";
    } else if (byte < 0x20 || byte >= 0x7f) {
      out += fmt::format("\\x{:02x}", byte);
    } else {
      out += c;
    }
    ++shown;
  }
  return out;
}

// fmt's "{}" is the shortest representation that reads back to the same double.
std::string printable(double value) {
  return fmt::format("{}", value);
}
std::string printable(std::int64_t value) {
  return fmt::format("{}", value);
}
std::string printable(std::uint64_t value) {
  return fmt::format("{}", value);
}

}  // namespace nbody
