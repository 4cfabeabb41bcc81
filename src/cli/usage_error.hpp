#pragma once
// Command-line mistakes (an unknown option or command, a missing value, an extra argument,
// options that exclude each other) in nbody's one message style, with the nearest name
// ("--tend: unknown option (did you mean --t-end?)"), and the exit statuses every command
// shares (docs/bad-input.md, "Exit codes").
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nbody/error.hpp"

namespace nbody::cli {

/// Exit statuses of nbody. A run stopped by SIGINT / SIGTERM exits 128 + the signal (130, 143).
inline constexpr int kExitSuccess = 0;
inline constexpr int kExitError = 1;  // the input or the run failed (a file, a value it holds)
inline constexpr int kExitUsage = 2;  // the command line could not be read (as argparse, getopt)
inline constexpr int kExitInternal = 70;  // a bug (sysexits' EX_SOFTWARE): please report it

/// A command line a command cannot run that CLI11 cannot see (neither -i nor --model given):
/// main() reports it as a usage error, exit status kExitUsage.
class UsageError : public Error {
 public:
  using Error::Error;
};

/// The name among `names` nearest to `typed` (optimal string alignment distance: an edit or a
/// swap of neighbours costs 1), if it is near enough to be a typo: at most 1 edit for names of
/// up to 3 characters, 2 up to 6, 3 beyond. The first of equally near names wins. Used for
/// unknown options and commands and for the unknown keys of a --config file.
[[nodiscard]] std::optional<std::string> closest_name(std::string_view typed,
                                                      const std::vector<std::string>& names);

}  // namespace nbody::cli
