#pragma once
// The library's messages name command-line flags ("--softening: must be a finite number
// >= 0 (got -1)"), since `nbody run` prints them. Python users set properties and keyword
// arguments instead, so every message that reaches Python is reworded with their names
// ("softening: must be ..."). The CLI names map to Python ones by one rule (drop the
// dashes, '-' -> '_') and a few exceptions (--energy is energy_method, --t-end is
// evolve()'s t, --steps step()'s count, --count generate()'s n,
// --test-particle-type testparticle_type).
#include <string>
#include <string_view>

namespace nbody::python {

/// The message with each --flag replaced by the Python name, and "--flag value" (a known
/// option value or a number) by "name='value'" / "name=value".
[[nodiscard]] std::string python_wording(std::string_view message);

/// The Python name of a long command-line option ("ias15-epsilon" -> "ias15_epsilon").
[[nodiscard]] std::string python_name(std::string_view cli_name);
/// The command-line name of a Python run option ("energy_method" -> "energy").
[[nodiscard]] std::string cli_name(std::string_view python_name);

}  // namespace nbody::python
