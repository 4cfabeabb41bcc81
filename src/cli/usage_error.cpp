// CLI11's parse errors in nbody's style. CLI11 checks required options before it looks for
// unexpected arguments, so `nbody render -i f --ouptut x.png` would say "--output is
// required": the unexpected argument, which is usually the cause, is reported first.
#include <CLI/CLI.hpp>

#include "cli/usage_error.hpp"

#include <algorithm>
#include <cctype>

#include "cli/config_options.hpp"
#include "cli/option_checks.hpp"
#include "nbody/input_error.hpp"

namespace nbody::cli {

namespace {

using config_detail::command_path;

/// Optimal string alignment distance (an edit, or a swap of neighbours, costs 1).
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

/// The deepest command that was parsed: `nbody run` for `nbody run --tend 10`.
const CLI::App* innermost(const CLI::App* app) {
  for (;;) {
    const auto subs = app->get_subcommands();
    if (subs.empty()) return app;
    app = subs.back();
  }
}

bool looks_like_option(const std::string& arg) {
  // "-1" and "-.5" are values (a negative number after an unknown option), not options.
  return arg.size() > 1 && arg[0] == '-' &&
         !(std::isdigit(static_cast<unsigned char>(arg[1])) || arg[1] == '.');
}

/// "--steps" for an option's names as typed (long ones, then one-letter ones).
std::vector<std::string> option_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* opt : app.get_options()) {
    for (const std::string& l : opt->get_lnames()) names.push_back("--" + l);
  }
  for (const CLI::Option* opt : app.get_options()) {
    for (const std::string& s : opt->get_snames()) names.push_back("-" + s);
  }
  return names;
}

std::vector<std::string> command_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (!sub->get_name().empty()) names.push_back(sub->get_name());
  }
  return names;
}

std::string joined(const std::vector<std::string>& items, const char* separator = ", ") {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : separator) + s;
  return out;
}

/// " (did you mean X?)" or "".
std::string did_you_mean(std::string_view typed, const std::vector<std::string>& names) {
  const auto best = closest_name(typed, names);
  return best ? " (did you mean " + *best + "?)" : std::string();
}

/// The positionals of a command as its usage line names them: "FILE", "SUITE".
std::vector<std::string> positional_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* opt : app.get_options()) {
    if (!opt->get_positional()) continue;
    std::string n = opt->get_name();
    std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return std::toupper(c); });
    names.push_back(n);
  }
  return names;
}

/// The first argument no command took, said as what it most likely is: a misspelt option (with
/// the nearest name), a misspelt command, or one argument too many. Options come first: a
/// misspelt option leaves its value behind as a stray argument.
std::optional<std::string> unexpected_argument(const CLI::App& root) {
  std::vector<std::pair<const CLI::App*, std::string>> left;
  for (const CLI::App* app = &root;;) {
    for (const std::string& arg : app->remaining(false)) left.emplace_back(app, arg);
    const auto subs = app->get_subcommands();
    if (subs.empty()) break;
    app = subs.back();
  }
  if (left.empty()) return std::nullopt;
  // A misspelt command first (the options after it belong to it), then options.
  auto first = std::find_if(left.begin(), left.end(), [&](const auto& a) {
    return a.first == &root && root.get_subcommands().empty() && !looks_like_option(a.second);
  });
  if (first == left.end()) {
    first = std::find_if(left.begin(), left.end(),
                         [](const auto& a) { return looks_like_option(a.second); });
  }
  const auto& [app, arg] = first != left.end() ? *first : left.front();
  if (looks_like_option(arg)) {
    const std::string name = arg.substr(0, arg.find('='));
    return printable(name) + ": unknown option" + did_you_mean(name, option_names(*app));
  }
  if (app->get_parent() == nullptr && app->get_subcommands().empty()) {
    const auto commands = command_names(*app);
    const std::string hint = did_you_mean(arg, commands);
    return printable(arg) + ": unknown command" +
           (hint.empty() ? " (the commands: " + joined(commands) + ")" : hint);
  }
  const auto positionals = positional_names(*app);
  return printable(arg) + ": unexpected argument (" + command_path(*app) + " takes " +
         (positionals.empty() ? std::string("options only") : joined(positionals, " ")) + ")";
}

/// What an option takes, for "missing value": " (expects a number)", " (expects one of
/// {direct,tree,none})", or "" for a path or a name.
std::string value_kind(const CLI::Option& opt) {
  using config_detail::Kind;
  switch (config_detail::kind_of(opt)) {
    case Kind::Unsigned:
      return " (expects a whole number >= 0)";
    case Kind::Integer:
      return " (expects a whole number)";
    case Kind::Number:
      return " (expects a number)";
    default: {
      const std::string type = opt.get_type_name();  // "TEXT:{text,csv,hdf5,auto}"
      const auto brace = type.find('{');
      return brace == std::string::npos ? std::string()
                                        : " (expects one of " + type.substr(brace) + ")";
    }
  }
}

/// "A excludes B" -> {A, B}; nothing when `message` is not of that form.
std::optional<std::pair<std::string, std::string>> split_at(const std::string& message,
                                                            const std::string& word) {
  const auto at = message.find(" " + word + " ");
  if (at == std::string::npos) return std::nullopt;
  return std::make_pair(message.substr(0, at), message.substr(at + word.size() + 2));
}

/// A message in "WHERE: WHAT" form for each kind of CLI11 error; CLI11's own words, escaped,
/// for kinds nbody's options cannot produce.
std::string restyled(const CLI::App& root, const CLI::Error& error) {
  const std::string what = error.what();
  const CLI::App& cmd = *innermost(&root);
  if (dynamic_cast<const CLI::ValidationError*>(&error) != nullptr) return what;  // ours
  if (dynamic_cast<const CLI::RequiredError*>(&error) != nullptr) {
    if (what == "A subcommand is required" || what.rfind("Requires at least", 0) == 0) {
      const std::string where = cmd.get_parent() == nullptr ? "" : command_path(cmd) + ": ";
      return where + "a command is required (" + joined(command_names(cmd)) + ")";
    }
    if (const auto s = split_at(what, "is"); s && s->second == "required") {
      const CLI::Option* opt = cmd.get_option_no_throw(s->first);
      const bool positional = opt != nullptr && opt->get_positional();
      std::string name = s->first;
      if (positional)
        std::transform(name.begin(), name.end(), name.begin(),
                       [](unsigned char c) { return std::toupper(c); });
      return name + ": missing (" + command_path(cmd) + " needs " +
             (positional ? "this argument" : "this option") + ")";
    }
  }
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&error) != nullptr) {
    const std::string name = what.substr(0, what.find(':'));
    if (const CLI::Option* opt = cmd.get_option_no_throw(name); opt != nullptr) {
      return name + ": missing value" + value_kind(*opt);
    }
  }
  if (dynamic_cast<const CLI::ExcludesError*>(&error) != nullptr) {
    if (const auto s = split_at(what, "excludes")) {
      return s->first + ": cannot be given with " + s->second + " (give one of them)";
    }
  }
  if (dynamic_cast<const CLI::RequiresError*>(&error) != nullptr) {
    if (const auto s = split_at(what, "requires")) return s->first + ": needs " + s->second;
  }
  if (dynamic_cast<const CLI::ConversionError*>(&error) != nullptr) {
    const std::string prefix = "Could not convert: ";
    if (what.rfind(prefix, 0) == 0) {
      if (const auto s = split_at(what.substr(prefix.size()), "=")) {
        return input_error(s->first, "takes no value, or true or false", s->second).what();
      }
    }
  }
  return printable(what, 400);
}

}  // namespace

std::optional<std::string> closest_name(std::string_view typed,
                                        const std::vector<std::string>& names) {
  std::string_view bare = typed;
  while (!bare.empty() && bare.front() == '-') bare.remove_prefix(1);
  if (bare.size() < 2) return std::nullopt;  // -x: any one-letter name is one edit away
  const std::size_t allowed = bare.size() <= 3 ? 1 : bare.size() <= 6 ? 2 : 3;
  std::optional<std::string> best;
  std::size_t best_distance = allowed + 1;
  for (const std::string& name : names) {
    const std::size_t dist = edit_distance(typed, name);
    if (dist < best_distance && name != typed) {
      best_distance = dist;
      best = name;
    }
  }
  return best;
}

std::string failure_message(const CLI::App* app, const CLI::Error& error) {
  const CLI::App& root = *app;
  const auto unexpected = unexpected_argument(root);
  std::string out = "nbody: error: " + (unexpected ? *unexpected : restyled(root, error)) + "\n";
  if (dynamic_cast<const CLI::ValidationError*>(&error) == nullptr || unexpected) {
    out += "Run '" + command_path(*innermost(&root)) + " --help' for more information.\n";
  }
  return out;
}

}  // namespace nbody::cli
