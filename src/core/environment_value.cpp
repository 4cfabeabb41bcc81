// whole_from_environment (environment_value.hpp).
#include "core/environment_value.hpp"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <string>

#include "nbody/input_error.hpp"

namespace nbody {

std::size_t whole_from_environment(const char* name, const char* text, unsigned long long lo,
                                   unsigned long long hi, const char* what) {
  if (text == nullptr) return 0;
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text, &end, 10);
  // Digits only: strtoull would also take a sign, spaces, and wrap "-1" around.
  if (!std::isdigit(static_cast<unsigned char>(text[0])) || *end != '\0' || errno == ERANGE ||
      v < lo || v > hi)
    throw input_error(name, what, std::string(text));
  return std::size_t(v);
}

}  // namespace nbody
