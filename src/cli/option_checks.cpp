// Every command-line value checked where it enters, one message style for all of them.
// CLI11's own PositiveNumber and Range print their bounds with 309 digits and its integer
// conversion reads "-1" as 2^64 - 1 and "010" as 8: nbody's checks replace them.
#include <CLI/CLI.hpp>

#include "cli/option_checks.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "cli/config_options.hpp"
#include "cli/usage_error.hpp"
#include "nbody/input_error.hpp"

namespace nbody::cli {

namespace {

/// "WHAT (got VALUE)": the message of a validator, the value made safe to print. An empty
/// value is shown as '' so that the message still says what was given.
std::string refusal(const std::string& what, const std::string& text) {
  return what + " (got " + (text.empty() ? std::string("''") : printable(text)) + ")";
}

/// The finite double the whole text spells, else nothing (inf, nan, 1e400, "1x", " 1").
std::optional<double> finite_number(const std::string& text) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text.front()))) return std::nullopt;
  char* end = nullptr;
  const double d = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(d)) return std::nullopt;
  return d;
}

/// A whole number as sign and magnitude. Digits with an optional sign, or a number whose
/// double is whole ("1e6", "2.0"); `too_big` when its magnitude exceeds 2^64 - 1.
struct Whole {
  bool negative = false;
  std::uint64_t magnitude = 0;
  bool too_big = false;
};

std::optional<Whole> whole_number(const std::string& text) {
  Whole w;
  std::size_t start = 0;
  if (!text.empty() && (text.front() == '-' || text.front() == '+')) {
    w.negative = text.front() == '-';
    start = 1;
  }
  const char* first = text.data() + start;
  const char* last = text.data() + text.size();
  if (first != last && std::all_of(first, last, [](char c) { return c >= '0' && c <= '9'; })) {
    const auto [end, ec] = std::from_chars(first, last, w.magnitude);
    w.too_big = ec == std::errc::result_out_of_range;
    return w;
  }
  const auto d = finite_number(text);
  if (!d || std::trunc(*d) != *d) return std::nullopt;
  constexpr double kTwoTo64 = 18446744073709551616.0;  // a whole double below converts exactly
  w.negative = *d < 0;
  w.too_big = std::fabs(*d) >= kTwoTo64;
  if (!w.too_big) w.magnitude = static_cast<std::uint64_t>(std::fabs(*d));
  return w;
}

/// The decimal text CLI11 converts (base 0 would read "010" as octal and "1e6" not at all).
std::string decimal(const Whole& w) {
  return (w.negative && w.magnitude != 0 ? "-" : "") + std::to_string(w.magnitude);
}

/// The whole number as int64 when it is one.
std::optional<std::int64_t> signed_value(const Whole& w) {
  constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  if (w.too_big || w.magnitude > kMax + (w.negative ? 1 : 0)) return std::nullopt;
  if (!w.negative) return static_cast<std::int64_t>(w.magnitude);
  return w.magnitude == kMax + 1 ? std::numeric_limits<std::int64_t>::min()
                                 : -static_cast<std::int64_t>(w.magnitude);
}

/// "; did you mean plummer?" for a near miss of a choice, else "".
std::string suggested(const std::string& text, const std::vector<std::string>& choices) {
  const auto best = closest_name(text, choices);
  return best ? "; did you mean " + *best + "?" : std::string();
}

std::string shown(double bound) {
  return printable(bound);
}

// ---- The type checks the walk attaches ----------------------------------------------------

CLI::Validator unsigned_check() {
  return CLI::Validator(
      [](std::string& text) {
        const auto w = whole_number(text);
        if (!w || w->negative) return refusal("must be a whole number >= 0", text);
        if (w->too_big) {
          return refusal(fmt::format("must be a whole number from 0 to {}",
                                     std::numeric_limits<std::uint64_t>::max()),
                         text);
        }
        text = decimal(*w);
        return std::string();
      },
      "", "nbody-type");
}

CLI::Validator integer_check() {
  return CLI::Validator(
      [](std::string& text) {
        constexpr auto kMin = std::numeric_limits<int>::min();
        constexpr auto kMax = std::numeric_limits<int>::max();
        const auto w = whole_number(text);
        if (!w) return refusal("must be a whole number", text);
        const auto v = signed_value(*w);
        if (!v || *v < kMin || *v > kMax) {
          return refusal(fmt::format("must be a whole number from {} to {}", kMin, kMax), text);
        }
        text = decimal(*w);
        return std::string();
      },
      "", "nbody-type");
}

CLI::Validator finite_check() {
  return CLI::Validator(
      [](std::string& text) {
        return finite_number(text) ? std::string() : refusal("must be a finite number", text);
      },
      "", "nbody-type");
}

/// Paths and names: an empty one was silently taken as "not given" (-o '', --restart '').
CLI::Validator text_check() {
  return CLI::Validator(
      [](std::string& text) {
        if (text.empty()) return refusal("must not be empty", text);
        const bool control = std::any_of(text.begin(), text.end(), [](char c) {
          const auto byte = static_cast<unsigned char>(c);
          return byte < 0x20 || byte == 0x7f;
        });
        return control ? refusal("must not contain control characters", text) : std::string();
      },
      "", "nbody-type");
}

void check_options_of(CLI::App& app) {
  using config_detail::Kind;
  for (CLI::Option* opt : app.get_options()) {
    switch (config_detail::kind_of(*opt)) {
      case Kind::Flag:
      case Kind::Boolean:
        break;
      case Kind::Unsigned:
        opt->transform(unsigned_check());
        break;
      case Kind::Integer:
        opt->transform(integer_check());
        break;
      case Kind::Number:
        opt->transform(finite_check());
        break;
      case Kind::Text:
      case Kind::Other:
        opt->transform(text_check());
        break;
    }
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) check_options_of(*sub);
}

}  // namespace

// ---- Range checks -----------------------------------------------------------------------

CLI::Validator positive_number() {
  return CLI::Validator(
      [](std::string& text) {
        const auto d = finite_number(text);
        return d && *d > 0 ? std::string() : refusal("must be a number > 0", text);
      },
      "", "positive");
}

CLI::Validator non_negative_number() {
  return CLI::Validator(
      [](std::string& text) {
        const auto d = finite_number(text);
        return d && *d >= 0 ? std::string() : refusal("must be a number >= 0", text);
      },
      "", "non-negative");
}

CLI::Validator number_in(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) {
        const auto d = finite_number(text);
        return d && *d >= lo && *d <= hi
                   ? std::string()
                   : refusal(fmt::format("must be a number from {} to {}", shown(lo), shown(hi)),
                             text);
      },
      "", "range");
}

CLI::Validator number_between(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) {
        const auto d = finite_number(text);
        return d && *d > lo && *d < hi
                   ? std::string()
                   : refusal(fmt::format("must be a number > {} and < {}", shown(lo), shown(hi)),
                             text);
      },
      "", "range");
}

CLI::Validator whole_in(std::int64_t lo, std::int64_t hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) {
        const auto w = whole_number(text);
        const auto v = w ? signed_value(*w) : std::nullopt;
        return v && *v >= lo && *v <= hi
                   ? std::string()
                   : refusal(fmt::format("must be a whole number from {} to {}", lo, hi), text);
      },
      "", "range");
}

CLI::Validator whole_at_least(std::uint64_t lo) {
  return CLI::Validator(
      [lo](std::string& text) {
        const auto w = whole_number(text);
        return w && !w->negative && !w->too_big && w->magnitude >= lo
                   ? std::string()
                   : refusal(fmt::format("must be a whole number >= {}", lo), text);
      },
      "", "range");
}

CLI::Validator existing_file() {
  return CLI::Validator(
      [](std::string& text) {
        std::error_code ec;
        const auto status = std::filesystem::status(text, ec);
        if (status.type() == std::filesystem::file_type::not_found) {
          return refusal("no such file", text);
        }
        if (std::filesystem::is_directory(status))
          return refusal("is a directory, not a file", text);
        return std::string();  // an unreadable file is reported by its reader, with the reason
      },
      "", "file");
}

CLI::Validator one_of(std::vector<std::string> choices) {
  std::string list;
  for (const std::string& c : choices) list += (list.empty() ? "" : ", ") + c;
  std::string shown_choices = list;
  shown_choices.erase(std::remove(shown_choices.begin(), shown_choices.end(), ' '),
                      shown_choices.end());
  return CLI::Validator(
      [choices = std::move(choices), list](std::string& text) {
        return std::find(choices.begin(), choices.end(), text) != choices.end()
                   ? std::string()
                   : refusal("must be one of " + list, text) + suggested(text, choices);
      },
      "{" + shown_choices + "}", "one-of");
}

std::optional<std::string> restyled_message(const std::string& message, const CLI::Option& opt,
                                            const std::string& where) {
  std::vector<std::string> names;
  for (const std::string& l : opt.get_lnames()) names.push_back("--" + l);
  for (const std::string& s : opt.get_snames()) names.push_back("-" + s);
  for (const std::string& name : names) {
    if (message.compare(0, name.size() + 2, name + ": ") == 0)
      return where + message.substr(name.size());  // "WHERE: WHAT (got VALUE)"
  }
  return std::nullopt;
}

void check_every_option(CLI::App& app) {
  app.failure_message(failure_message);
  check_options_of(app);
}

}  // namespace nbody::cli
