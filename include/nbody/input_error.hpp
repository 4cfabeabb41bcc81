#pragma once
// The one message style of bad input, for every front end (command line, config files,
// snapshot and checkpoint readers, Python): "WHERE: WHAT (got VALUE)". The CLI prints it as
// "nbody: error: WHERE: WHAT (got VALUE)" and exits non-zero; Python raises it.
//
// What a user wrote is shown as it was written, but made safe to print: control bytes and
// bytes outside printable ASCII are escaped (\x1b), so a file line cannot drive the terminal,
// and long values are cut (a 100 kB CSV field gives a one-line message).
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

#include "nbody/error.hpp"

namespace nbody {

/// The longest value a message shows before it is cut.
inline constexpr std::size_t kMessageValueChars = 60;

/// `text` safe to print in one line: bytes below 0x20, 0x7f and above escaped as \xNN, a
/// backslash as \\; cut after `max_chars` printed characters, with "... (N bytes)".
std::string printable(std::string_view text, std::size_t max_chars = kMessageValueChars);

/// A number as messages show it: the shortest form that reads back to the same value
/// ("0.1", "1e+300", "inf", "nan"), never 309 digits.
std::string printable(double value);
std::string printable(std::int64_t value);
std::string printable(std::uint64_t value);
inline std::string printable(int value) {
  return printable(static_cast<std::int64_t>(value));
}
inline std::string printable(unsigned value) {
  return printable(static_cast<std::uint64_t>(value));
}
inline std::string printable(long long value) {
  return printable(static_cast<std::int64_t>(value));
}
inline std::string printable(unsigned long long value) {
  return printable(static_cast<std::uint64_t>(value));
}
inline std::string printable(const char* text) {
  return printable(std::string_view(text));
}
inline std::string printable(const std::string& text) {
  return printable(std::string_view(text));
}

/// "WHERE: WHAT (got VALUE)", with WHERE and VALUE made printable. WHERE names the option
/// (`--dt`), the config key with its file and line (`run.toml:3: dt`), the file and field
/// (`cluster.h5: /PartType1/Masses[17]`) or the Python argument (`masses[3]`).
template <class Value>
Error input_error(std::string_view where, std::string_view what, const Value& value) {
  return Error(printable(where, 4 * kMessageValueChars) + ": " + std::string(what) + " (got " +
               printable(value) + ")");
}

/// What a number a user hands over may be: any finite number (positions, velocities), finite
/// and >= 0 (radii), or finite and > 0 (masses). One rule and one text for every reader and
/// the Python module, so a value one front end accepts no other refuses.
enum class ValueRule { Finite, NonNegative, Positive };

inline bool obeys(double v, ValueRule rule) {
  return std::isfinite(v) &&
         (rule == ValueRule::Finite || (rule == ValueRule::NonNegative ? v >= 0 : v > 0));
}

/// The rule as a message says it: "must be finite and > 0".
inline const char* rule_text(ValueRule rule) {
  return rule == ValueRule::Finite        ? "must be finite"
         : rule == ValueRule::NonNegative ? "must be finite and >= 0"
                                          : "must be finite and > 0";
}

/// "WHERE: WHAT", for problems that have no single value to show.
inline Error input_error(std::string_view where, std::string_view what) {
  return Error(printable(where, 4 * kMessageValueChars) + ": " + std::string(what));
}

}  // namespace nbody
