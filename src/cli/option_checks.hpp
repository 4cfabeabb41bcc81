#pragma once
// The checks every command-line value goes through, in nbody's one message style
// ("--steps: must be a whole number >= 0 (got -1)"), and the walk that attaches the check of
// its type to every option of every subcommand, so that no option can be forgotten.
//
// The validators return the message without the option's name: CLI11 puts "--NAME: " in
// front (CLI::ValidationError), main() prints "nbody: error: " before it, and a --config file
// puts "FILE:LINE: KEY: " instead (config_file.cpp).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cli/cli11_fwd.hpp"

namespace nbody::cli {

/// A finite number > 0.
[[nodiscard]] CLI::Validator positive_number();
/// A finite number >= 0.
[[nodiscard]] CLI::Validator non_negative_number();
/// A finite number in [lo, hi].
[[nodiscard]] CLI::Validator number_in(double lo, double hi);
/// A finite number in (lo, hi), both ends left out.
[[nodiscard]] CLI::Validator number_between(double lo, double hi);
/// A whole number in [lo, hi] (a count, a size in pixels, ...).
[[nodiscard]] CLI::Validator whole_in(std::int64_t lo, std::int64_t hi);
/// A whole number >= lo (an unsigned count with a lower bound: -n >= 1).
[[nodiscard]] CLI::Validator whole_at_least(std::uint64_t lo);

/// A path to a file that exists and is not a directory ("--input: no such file (got x.txt)").
[[nodiscard]] CLI::Validator existing_file();

/// One of these words (a choice given as text: --snapshot-precision float|double).
[[nodiscard]] CLI::Validator one_of(std::vector<std::string> choices);

/// A message about `opt`, "--dt: WHAT (got VALUE)", as "WHERE: WHAT (got VALUE)" (a config
/// file's "run.toml:3: dt"); nothing when it does not start with one of the option's names.
[[nodiscard]] std::optional<std::string> restyled_message(const std::string& message,
                                                          const CLI::Option& opt,
                                                          const std::string& where);

/// Attaches, in front of its own checks, the check of its type to every option of every
/// subcommand of app (flags excepted): UINT a whole number >= 0 (no sign, so -1 is never
/// read as 2^64 - 1, written back in decimal so CLI11 never reads 010 as octal), INT a
/// whole number of an int, FLOAT a finite number (no inf, nan or 1e400), anything else
/// (paths, names) a non-empty text without control characters. The library's checks that
/// the options run (options.cpp library_check) say "--NAME: WHAT (got VALUE)" themselves.
/// Also makes CLI11's own
/// parse errors come out as "nbody: error: ...". Call once, after every option was added.
void check_every_option(CLI::App& app);

/// What a CLI11 parse error of the command line `app` (the top command) prints, in nbody's
/// style: "nbody: error: WHERE: WHAT" and, unless it is a refused value, a line naming the
/// command's --help. An argument no command took is reported first, with the nearest name
/// ("--tend: unknown option (did you mean --t-end?)", "runn: unknown command (did you mean
/// run?)"). Defined in usage_error.cpp.
[[nodiscard]] std::string failure_message(const CLI::App* app, const CLI::Error& error);

}  // namespace nbody::cli
