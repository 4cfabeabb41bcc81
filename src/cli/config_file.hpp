#pragma once
// `nbody run --config run.toml`: a subcommand's options from a TOML file, the command line
// winning over the file; and the TOML document of the options a run used (like SWIFT's
// used_parameters.yml), which --config reads back to the same values.
//
// The file holds one top-level `key = value` per option: the key is the option's long name
// ("t-end" and "t_end" are both --t-end; a one-letter short name such as "n" works too),
// the value a TOML number, string, boolean (flags) or array (options of several values).
// Values go through CLI11 exactly as if typed on the command line, so the same checks apply.
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "cli/cli11_fwd.hpp"
#include "nbody/error.hpp"

namespace nbody::cli {

/// Adds `--config FILE` to cmd, storing the path in `path`.
void add_config_option(CLI::App* cmd, std::string& path);

/// Reads the TOML file `path` and applies its values to the options of `cmd` that the
/// command line did not give (call it from cmd's callback, after CLI11 has parsed the
/// command line). An option excluded by one given on the command line is skipped, so
/// `--t-end 5` overrides `steps = 100`. A value equal to the option's default leaves the
/// option as it is (not given, count() == 0), so a used-parameters file, which lists every
/// default, reads back without looking like a command line that gave them all. Throws nbody::Error
/// naming the file, the line and the key for: an unreadable file, a TOML syntax error, a table
/// ([section] or dotted key), an unknown key (with the closest option name), a value of the wrong
/// type or one CLI11 rejects, a key given twice, two keys that exclude each other, and the keys
/// `help`, `config` and those in `refused` (options that a config file may not set). Built without
/// toml++, it throws an error saying so.
/// Returns the options the file named (not those the command line overrode); `applied` is
/// false for a value equal to the default. Every value error reads "FILE:LINE: KEY: WHAT (got
/// VALUE)".
struct ConfigSetting {
  const CLI::Option* option;
  std::string key;  // as written in the file
  std::uint32_t line;
  bool applied = true;  // false: the value is the default, left as it was
};
std::vector<ConfigSetting> apply_config_file(CLI::App& cmd, const std::filesystem::path& path,
                                             const std::vector<std::string>& refused = {});
/// The same for a TOML text (`file` names it in messages): a checkpoint's parameters.
std::vector<ConfigSetting> apply_config_text(CLI::App& cmd, const std::string& text,
                                             const std::string& file,
                                             const std::vector<std::string>& refused = {});
/// The `key = literal` lines nbody wrote (used_parameters_toml), read without toml++: what
/// apply_config_text does in a build without it (written_parameters.cpp).
std::vector<ConfigSetting> apply_written_parameters(CLI::App& cmd, const std::string& text,
                                                    const std::string& file);

/// A message about `opt` ("--dt: WHAT (got VALUE)") as
/// "WHERE: WHAT (got VALUE)"; any other message as "WHERE: MESSAGE".
[[nodiscard]] std::string restyled(const std::string& message, const CLI::Option& opt,
                                   const std::string& where);

/// An error of a run that names an option the config file set, restyled to name the file,
/// line and key (block-size = 1 on the CPU: a check that needs --device too, so it comes
/// when the run starts, after the file was read); any other error as it is.
[[nodiscard]] Error blamed_on_config(const Error& error, const std::vector<ConfigSetting>& settings,
                                     const std::string& file);

/// A TOML document with every long option of cmd (except `help` and those named in `skip`)
/// and the value in effect: given on the command line or in the config file, else the
/// default. Each is preceded by a comment with the option's description; options with no
/// value (or excluded by one that has a value) are written as comments. Numbers are bare,
/// flags true/false, strings quoted, options of several values arrays. apply_config_file
/// on this text gives a fresh cmd the same values.
/// `fixed` gives, by key, the line written in place of the value in effect (a checkpoint's
/// own line, or "# count: not used (...)" for an option that did not apply).
[[nodiscard]] std::string used_parameters_toml(
    const CLI::App& cmd, const std::vector<std::string>& skip,
    const std::map<std::string, std::string>& fixed = {});

}  // namespace nbody::cli
