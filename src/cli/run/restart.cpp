#include "cli/run/restart.hpp"

#include <chrono>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <utility>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/config_options.hpp"
#include "cli/run/run_args.hpp"
#include "cli/run/run_files.hpp"
#include "nbody/error.hpp"
#include "nbody/input_error.hpp"

namespace nbody::cli {

namespace fs = std::filesystem;
using namespace config_detail;

namespace {

/// Options that change the trajectory: a restart refuses another value than the
/// checkpoint's unless --override says the change is meant.
const std::set<std::string> kPhysics = {"dt",
                                        "gravity",
                                        "kernel",
                                        "precision",
                                        "softening",
                                        "G",
                                        "theta",
                                        "quadrupole",
                                        "mac",
                                        "alpha",
                                        "integrator",
                                        "damping",
                                        "timestep",
                                        "eta",
                                        "dt-min",
                                        "timestep-criterion",
                                        "collisions",
                                        "restitution",
                                        "collision-iterations",
                                        "ias15-epsilon",
                                        "ias15-adaptive",
                                        "test-particle-type"};

/// Options about the source of the bodies, which a checkpoint replaces: not taken from it,
/// and ignored (with a note) when given.
const std::set<std::string> kSource = {"input",
                                       "model",
                                       "count",
                                       "seed",
                                       "radius",
                                       "mass",
                                       "size",
                                       "velocity",
                                       "e",
                                       "a",
                                       "separation",
                                       "impact",
                                       "disk-mass",
                                       "scale-length",
                                       "rmax",
                                       "concentration",
                                       "dim",
                                       "n-active",
                                       "test-particles"};

/// The model's own parameters, which do not apply to bodies read from a file (--radius does:
/// it replaces the radii of the file).
const std::set<std::string> kModelOnly = {
    "count",  "seed",      "mass",         "size", "velocity",     "e", "a", "separation",
    "impact", "disk-mass", "scale-length", "rmax", "concentration"};

/// Options of this invocation only, never taken from a checkpoint: how it talks and how
/// many threads (and bodies per rank) this machine gives it.
const std::set<std::string> kInvocation = {
    "help", "help-all", "config",  "restart",  "override",           "quiet",
    "json", "timings",  "threads", "progress", "max-bodies-per-rank"};

/// The key of a used-parameters value line: `key = value` or `# key: not set / not used`.
std::string key_of(const std::string& line) {
  if (line.rfind("# ", 0) == 0) {
    const auto colon = line.find(':');
    return colon == std::string::npos ? std::string() : line.substr(2, colon - 2);
  }
  const auto eq = line.find(" = ");
  return eq == std::string::npos ? std::string() : line.substr(0, eq);
}

/// The value lines of a used-parameters text by key, with their line numbers: each option
/// is a block of description comments ending with its value line (blocks are separated by
/// blank lines; the first block is the header).
struct ValueLine {
  std::string line;
  std::size_t number;  // 1-based, in the text
};
std::map<std::string, ValueLine> value_lines(const std::string& text) {
  std::map<std::string, ValueLine> out;
  std::istringstream in(text);
  std::string line, last;
  std::size_t number = 0, last_number = 0;
  bool header = true;
  auto close_block = [&] {
    if (!header && !last.empty()) out[normalized(key_of(last))] = {last, last_number};
    header = false;
    last.clear();
  };
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) {
      close_block();
      continue;
    }
    last = line;
    last_number = number;
  }
  close_block();
  return out;
}

/// The value of a `key = value` line as TOML ("" for a comment line).
std::string literal_of(const std::string& line) {
  const auto eq = line.find(" = ");
  return line.rfind("# ", 0) == 0 || eq == std::string::npos ? std::string() : line.substr(eq + 3);
}

/// The TOML literal of the value in effect of an option (as used_parameters_toml writes it).
std::string literal_in_effect(const CLI::Option& opt) {
  const auto values = values_in_effect(opt);
  if (!values) return {};
  if (!takes_several(opt)) return toml_literal(values->back(), kind_of(opt));
  std::string out;
  for (const std::string& v : *values)
    out += (out.empty() ? "" : ", ") + toml_literal(v, kind_of(opt));
  return "[" + out + "]";
}

/// A TOML literal as messages show it: strings without their quotes.
std::string shown(const std::string& literal) {
  if (literal.size() >= 2 && literal.front() == '"' && literal.back() == '"')
    return literal.substr(1, literal.size() - 2);
  return literal;
}

}  // namespace

RestartPlan plan_restart(CLI::App& cmd, const RunArgs& args,
                         const std::vector<ConfigSetting>& from_config) {
  RestartPlan plan;
  if (args.outputs.restart.empty()) {
    if (args.outputs.override_physics)
      throw Error(
          "--override: only used with --restart (it allows a restart to change the physics)");
    return plan;
  }
  plan.file =
      restart_file(args.outputs.restart, output_dir_of(args.outputs.output_dir, args.output));
  if (!plan.file) return plan;  // --restart latest, none yet: a fresh start
  const auto start = std::chrono::steady_clock::now();
  // The attributes alone: the run reads the bodies at its start, each rank its share in a
  // decomposed run (run_start.cpp), so no rank holds all N to parse the options.
  plan.state = std::make_shared<CheckpointState>(read_checkpoint_header(*plan.file));
  plan.read_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  plan.step = plan.state->step;
  plan.time = plan.state->particles.time;
  plan.parameters = plan.state->parameters;

  // What the command line and the config file named (a config value equal to the default
  // names it too, though CLI11 does not count it).
  std::set<const CLI::Option*> named;
  for (const CLI::Option* opt : cmd.get_options())
    if (opt->count() > 0) named.insert(opt);
  for (const ConfigSetting& s : from_config) named.insert(s.option);

  const std::string& text = plan.parameters;
  const auto lines = value_lines(text);
  std::vector<std::string> differ;
  for (const auto& [key, value] : lines) {
    const CLI::Option* opt = find_option(cmd, key);
    if (opt == nullptr || named.count(opt) == 0 || kPhysics.count(key) == 0) continue;
    const std::string before = literal_of(value.line);
    const std::string after = literal_in_effect(*opt);
    if (before.empty() || after.empty() || before == after) continue;
    if (args.outputs.override_physics) {
      plan.changes.push_back({long_name(*opt), shown(before), shown(after)});
    } else if (differ.empty()) {
      differ.push_back(long_name(*opt));
      plan.changes.push_back({long_name(*opt), shown(before), shown(after)});
    } else {
      differ.push_back(long_name(*opt));
    }
  }
  if (!args.outputs.override_physics && !differ.empty()) {
    const RestartChange& first = plan.changes.front();
    std::string also;
    for (std::size_t i = 1; i < differ.size(); ++i) also += (i > 1 ? ", " : "") + differ[i];
    throw input_error(first.option,
                      fmt::format("differs from the checkpoint's {}; the run would not continue "
                                  "the same physics (add --override to change it{})",
                                  first.before, also.empty() ? "" : "; " + also + " differ too"),
                      first.after);
  }
  for (const CLI::Option* opt : cmd.get_options()) {
    if (named.count(opt) > 0 && !opt->get_lnames().empty() && named_in(*opt, kSource))
      plan.ignored.push_back(long_name(*opt));
  }

  // The checkpoint's options as the lowest layer: its text with the lines not taken blanked,
  // so that messages give the line numbers of the checkpoint's own parameters.
  std::vector<std::string> text_lines;
  {
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) text_lines.push_back(line);
  }
  std::vector<bool> keep(text_lines.size() + 1, false);
  for (const auto& [key, value] : lines) {
    const CLI::Option* opt = find_option(cmd, key);
    if (opt == nullptr || named.count(opt) > 0 || kSource.count(key) > 0 ||
        kInvocation.count(key) > 0 || literal_of(value.line).empty())
      continue;  // an option this nbody lacks (an older checkpoint) is left at its default
    keep[value.number] = true;
  }
  std::string inherited;
  for (std::size_t i = 0; i < text_lines.size(); ++i) {
    if (keep[i + 1]) inherited += text_lines[i];
    inherited += '\n';
  }
  apply_config_text(cmd, inherited, plan.file->string() + " (its parameters)");
  return plan;
}

void print_restart_notes(const RestartPlan& plan, std::FILE* human, bool talk, bool root) {
  if (!plan.ignored.empty() && talk) {
    std::string names;
    for (const auto& o : plan.ignored) names += (names.empty() ? "" : ", ") + o;
    fmt::print(human, "restart: the bodies come from the checkpoint; not used: {}\n", names);
  }
  for (const RestartChange& c : plan.changes) {
    if (root)
      fmt::print(stderr, "restart: {} {} -> {} (--override)\n", c.option, c.before, c.after);
  }
}

std::string run_parameters(const CLI::App& cmd, const RunArgs& args, std::size_t bodies) {
  std::map<std::string, std::string> fixed;
  std::string origin;
  if (args.restart.file) {
    // The bodies came from the checkpoint: its record of where the run began stays.
    const auto before = value_lines(args.restart.parameters);
    for (const std::string& key : kSource) {
      const auto line = before.find(key);
      fixed[key] =
          line != before.end() ? line->second.line : fmt::format("# {}: not used (restarted)", key);
    }
    origin = fmt::format("# Restarted from {} (step {}, t = {:.6g}) with {} bodies\n",
                         printable(args.restart.file->string()), args.restart.step,
                         args.restart.time, bodies);
  } else if (!args.input.empty()) {
    for (const std::string& key : kModelOnly)
      fixed[key] = fmt::format("# {}: not used (the bodies come from --input)", key);
    origin = fmt::format("# {} bodies from {}\n", bodies, printable(args.input));
  } else {
    origin = fmt::format("# {} bodies from --model {}\n", bodies, args.model.model);
  }
  std::string text = used_parameters_toml(cmd, {"help", "config", "restart", "override"}, fixed);
  const auto header_end = text.find("\n\n");
  text.insert(header_end == std::string::npos ? text.size() : header_end + 1, origin);
  return text;
}

std::optional<fs::path> restart_file(const std::string& restart, const fs::path& output_dir) {
  if (restart.empty()) return std::nullopt;
  if (restart == "latest") return latest_checkpoint(output_dir);
  // status with an error code: a name too long or a folder without permission is a
  // message, not an exception from std::filesystem.
  std::error_code ec;
  const fs::file_status status = fs::status(restart, ec);
  if (fs::is_directory(status)) {
    auto found = latest_checkpoint(restart);
    if (!found) throw input_error("--restart", "no checkpoint_* file in this folder", restart);
    return found;
  }
  if (!fs::exists(status)) {
    throw input_error("--restart",
                      ec && ec != std::errc::no_such_file_or_directory
                          ? "cannot read it (" + ec.message() + ")"
                          : std::string("no such file or folder"),
                      restart);
  }
  return fs::path(restart);
}

}  // namespace nbody::cli
