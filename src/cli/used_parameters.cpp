// The TOML document of the options a run used (used_parameters_toml, config_file.hpp),
// which `nbody run --config` reads back to the same values.
#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/config_file.hpp"
#include "cli/config_options.hpp"

namespace nbody::cli {

using namespace config_detail;

std::string used_parameters_toml(const CLI::App& cmd, const std::vector<std::string>& skip,
                                 const std::map<std::string, std::string>& fixed) {
  std::set<std::string> skipped{"help", "help-all"};
  for (const std::string& s : skip) skipped.insert(normalized(s));
  const std::string path = command_path(cmd);
  std::string out = fmt::format(
      "# The options in effect for `{}`: given on the command line or in a config file, else\n"
      "# the defaults. Read back with: {} --config FILE\n",
      path, path);
  std::vector<const CLI::Option*> written;  // with a value
  const auto options = cmd.get_options();
  for (const CLI::Option* opt : options) {
    if (opt->get_lnames().empty() || named_in(*opt, skipped)) continue;
    const std::string key = opt->get_lnames().front();
    out += '\n';
    std::stringstream description(opt->get_description());
    for (std::string line; std::getline(description, line);) out += "# " + line + '\n';
    if (const auto f = fixed.find(key); f != fixed.end()) {
      out += f->second + '\n';
      continue;
    }

    // Of two options that exclude each other, only the one with a value is written.
    const CLI::Option* excluder = nullptr;
    if (opt->count() == 0) {
      for (const CLI::Option* other : options) {
        const bool has_value =
            other->count() > 0 || std::find(written.begin(), written.end(), other) != written.end();
        if (other != opt && has_value && exclude_each_other(*opt, *other)) excluder = other;
      }
    }
    if (excluder != nullptr) {
      out += fmt::format("# {}: not used (excluded by {})\n", key, long_name(*excluder));
      continue;
    }
    const auto values = values_in_effect(*opt);
    if (!values) {
      out += fmt::format("# {}: not set\n", key);
      continue;
    }
    const Kind kind = kind_of(*opt);
    std::string literal;
    if (takes_several(*opt)) {
      for (const std::string& v : *values)
        literal += (literal.empty() ? "" : ", ") + toml_literal(v, kind);
      literal = "[" + literal + "]";
    } else {
      literal = toml_literal(values->back(), kind);
    }
    out += fmt::format("{} = {}\n", toml_key(key), literal);
    written.push_back(opt);
  }
  return out;
}

}  // namespace nbody::cli
