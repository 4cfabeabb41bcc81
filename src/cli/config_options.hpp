#pragma once
// Internal to `nbody run --config` (config_file.cpp reads a config file, used_parameters.cpp
// writes one): the option names and value kinds both sides go by, and the TOML text of
// CLI11's value strings. Each is described where config_options.cpp defines it.
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "cli/cli11_fwd.hpp"

namespace nbody::cli::config_detail {

// ---- Option names and value kinds -----------------------------------------------------

std::string normalized(std::string_view name);
/// Whether one of the option's long names, normalized, is in `names`.
bool named_in(const CLI::Option& opt, const std::set<std::string>& names);
/// "--" and the first long name.
std::string long_name(const CLI::Option& opt);
bool exclude_each_other(const CLI::Option& a, const CLI::Option& b);

/// What TOML type an option takes, from CLI11's type name ("UINT:POSITIVE" -> Unsigned).
/// Other: a custom type name; any scalar is passed on as its string and CLI11 decides.
enum class Kind { Flag, Boolean, Integer, Unsigned, Number, Text, Other };

Kind kind_of(const CLI::Option& opt);
bool takes_several(const CLI::Option& opt);

// ---- TOML text ------------------------------------------------------------------------

std::string toml_string(std::string_view s);
std::string toml_float(double d);
std::string toml_key(const std::string& key);
std::string toml_literal(const std::string& value, Kind kind);
/// "nbody run": the subcommand's names from the top.
std::string command_path(const CLI::App& cmd);
std::optional<std::vector<std::string>> default_values(const CLI::Option& opt);
std::optional<std::vector<std::string>> values_in_effect(const CLI::Option& opt);
/// The option a key names (a long name in any spelling, else a short name); null if none.
CLI::Option* find_option(CLI::App& cmd, const std::string& key);
/// Whether values are the option's default (compared as TOML, so 1 == 1.0 for a number).
bool equals_default(const CLI::Option& opt, const std::vector<std::string>& values);

/// The config file's text as toml++ reads it: pure ASCII with the same meaning (UTF-8 in
/// "..." strings as \u escapes); throws nbody::Error "FILE:LINE: a non-ASCII byte ..." for
/// one anywhere else (see config_options.cpp: toml++ 3.3 misbehaves on non-ASCII).
std::string ascii_for_toml(const std::string& text, const std::string& file);

}  // namespace nbody::cli::config_detail
