// Reads back the parameters nbody itself wrote (used_parameters.cpp: `key = literal` lines of
// TOML scalars and flat arrays) without toml++: how a build without toml++ still restarts a
// checkpoint with the checkpoint's own options (run/restart.cpp). Any other TOML is refused.
#include <CLI/CLI.hpp>

#include <sstream>

#include <fmt/format.h>

#include "cli/config_file.hpp"
#include "cli/config_options.hpp"
#include "nbody/error.hpp"

namespace nbody::cli {

using namespace config_detail;

namespace {

/// One value of a literal written by toml_literal: a quoted string (its escapes undone) or
/// the bare text of a number or boolean. Advances `i` past it.
std::string next_value(const std::string& s, std::size_t& i, const std::string& where) {
  if (s[i] != '"') {
    const std::size_t end = s.find_first_of(",]", i);
    std::string bare = s.substr(i, end == std::string::npos ? std::string::npos : end - i);
    i = end == std::string::npos ? s.size() : end;
    while (!bare.empty() && bare.back() == ' ') bare.pop_back();
    return bare;
  }
  std::string out;
  for (++i; i < s.size() && s[i] != '"'; ++i) {
    if (s[i] != '\\') {
      out += s[i];
      continue;
    }
    if (++i >= s.size()) break;
    switch (s[i]) {
      case 'n':
        out += '\n';
        break;
      case 't':
        out += '\t';
        break;
      case 'u':  // toml_string writes \uXXXX only for control bytes
        if (i + 4 >= s.size()) throw Error(where + ": a cut \\u escape");
        out += static_cast<char>(std::stoi(s.substr(i + 1, 4), nullptr, 16));
        i += 4;
        break;
      default:
        out += s[i];
    }
  }
  if (i >= s.size()) throw Error(where + ": a string without its closing quote");
  ++i;  // the closing quote
  return out;
}

/// The CLI11 strings of a literal: one value, or the items of [a, b, ...].
std::vector<std::string> literal_values(const std::string& literal, const std::string& where) {
  std::vector<std::string> out;
  std::size_t i = 0;
  const bool array = !literal.empty() && literal[0] == '[';
  if (array) ++i;
  while (i < literal.size()) {
    while (i < literal.size() && literal[i] == ' ') ++i;
    if (array && i < literal.size() && literal[i] == ']') break;
    out.push_back(next_value(literal, i, where));
    if (!array) break;
    while (i < literal.size() && (literal[i] == ' ' || literal[i] == ',')) ++i;
  }
  return out;
}

}  // namespace

std::vector<ConfigSetting> apply_written_parameters(CLI::App& cmd, const std::string& text,
                                                    const std::string& file) {
  std::vector<ConfigSetting> settings;
  std::istringstream in(text);
  std::uint32_t number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (line.empty() || line[0] == '#') continue;
    const auto eq = line.find(" = ");
    const std::string where = fmt::format("{}:{}", file, number);
    if (eq == std::string::npos) throw Error(where + ": not a `key = value` line of nbody's");
    const std::string key = line.substr(0, eq);
    CLI::Option* opt = find_option(cmd, key);
    if (opt == nullptr) throw Error(fmt::format("{}: unknown key '{}'", where, key));
    std::vector<std::string> values = literal_values(line.substr(eq + 3), where + ": " + key);
    ConfigSetting setting{opt, key, number, !equals_default(*opt, values)};
    if (setting.applied) {
      try {
        opt->add_result(std::move(values));
        opt->run_callback();
      } catch (const std::exception& err) {
        throw Error(fmt::format("{}: {}: {}", where, key, err.what()));
      }
    }
    settings.push_back(setting);
  }
  return settings;
}

}  // namespace nbody::cli
