#pragma once
// The values of nbody's environment variables (NBODY_DOMAIN_*, NBODY_IO_TRACE), read one way:
// a bad text stops the run with the input error that names the variable and the text.
#include <cstddef>

namespace nbody {

/// A whole number in [lo, hi] from an environment variable's text (null: unset, 0): digits
/// only; throws input_error(name, what, text) otherwise.
std::size_t whole_from_environment(const char* name, const char* text, unsigned long long lo,
                                   unsigned long long hi, const char* what);

}  // namespace nbody
