// nbody run --config FILE: TOML values applied to a subcommand's options through CLI11. The
// only file that includes toml++ (header-only and slow to compile). The writer of the options
// a run used is used_parameters.cpp.
#include <CLI/CLI.hpp>

#include "cli/config_file.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "cli/config_options.hpp"
#include "cli/option_checks.hpp"
#include "cli/usage_error.hpp"
#include "nbody/error.hpp"
#include "nbody/input_error.hpp"

#if NBODY_HAVE_TOML
// toml++ 3.3's internal assertions fire on some malformed documents (`[` alone on a line,
// `a = [}`, a time with a bad hour: fuzz/regressions/config), where its parser goes on to
// refuse the document with a parse error. Release builds compile them out; every build does
// here, so a malformed --config file is a message in the debug and fuzz builds too, not an
// abort. The fuzz target (ASan + UBSan) replays those inputs to show the path stays safe.
#define TOML_ASSERT(expr) static_assert(true)
#include <toml++/toml.h>
#endif

namespace nbody::cli {

using namespace config_detail;

namespace {

// ---- Reading ------------------------------------------------------------------------------

#if NBODY_HAVE_TOML

/// What an option takes, for messages: "a non-negative integer", "an array of numbers".
std::string expectation(const CLI::Option& opt) {
  static constexpr const char* one[] = {
      "true or false", "true or false", "an integer", "a non-negative integer",
      "a number",      "a string",      "a value"};
  static constexpr const char* many[] = {
      "an array of true/false", "an array of true/false",
      "an array of integers",   "an array of non-negative integers",
      "an array of numbers",    "an array of strings",
      "an array of values"};
  const auto k = static_cast<std::size_t>(kind_of(opt));
  return takes_several(opt) ? many[k] : one[k];
}

std::string read_config_text(const std::filesystem::path& path) {
  struct Closer {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  errno = 0;
  std::unique_ptr<std::FILE, Closer> file(std::fopen(path.c_str(), "rb"));
  if (!file) {
    throw Error(fmt::format("{}: cannot open the config file ({})", path.string(),
                            errno != 0 ? std::strerror(errno) : "unknown reason"));
  }
  std::string text;
  char buffer[1 << 14];
  std::size_t got = 0;
  errno = 0;
  while ((got = std::fread(buffer, 1, sizeof buffer, file.get())) > 0) text.append(buffer, got);
  if (std::ferror(file.get())) {
    throw Error(fmt::format("{}: cannot read the config file ({})", path.string(),
                            errno != 0 ? std::strerror(errno) : "read error"));
  }
  return text;
}

/// A value as it is written in the file, for messages: `steps = 0.5`.
std::string shown(const toml::node& v) {
  if (const auto* s = v.as_string()) return toml_string(s->get());
  if (const auto* i = v.as_integer()) return fmt::format("{}", i->get());
  if (const auto* f = v.as_floating_point()) return toml_float(f->get());
  if (const auto* b = v.as_boolean()) return b->get() ? "true" : "false";
  if (const auto* a = v.as_array()) {
    std::string out = "[";
    for (const toml::node& item : *a) out += (out.size() > 1 ? ", " : "") + shown(item);
    return out + "]";
  }
  std::ostringstream out;  // dates and times
  v.visit([&](const auto& node) { out << node; });
  return out.str();
}

/// Floats are handed to CLI11 as the shortest text that CLI11's conversion (strtold, then a
/// cast) turns back into the same double; 17 digits when the double rounding would not.
std::string exact_decimal(double d) {
  std::string s = fmt::format("{}", d);
  const double back = static_cast<double>(std::strtold(s.c_str(), nullptr));
  if (back == d || std::isnan(d)) return s;
  return fmt::format("{:.17g}", d);
}

/// One TOML scalar as the option's string form; nothing when its type does not fit.
std::optional<std::string> scalar_text(const toml::node& v, Kind kind) {
  if (const auto* b = v.as_boolean()) {
    if (kind == Kind::Flag || kind == Kind::Boolean || kind == Kind::Other)
      return b->get() ? "true" : "false";
    return std::nullopt;
  }
  if (const auto* i = v.as_integer()) {
    if (kind == Kind::Unsigned && i->get() < 0) return std::nullopt;
    if (kind == Kind::Integer || kind == Kind::Unsigned || kind == Kind::Number ||
        kind == Kind::Other) {
      return fmt::format("{}", i->get());
    }
    return std::nullopt;
  }
  if (const auto* f = v.as_floating_point()) {
    if (kind == Kind::Number || kind == Kind::Other) return exact_decimal(f->get());
    return std::nullopt;
  }
  if (const auto* s = v.as_string()) {
    const std::string& text = s->get();
    if (kind == Kind::Text || kind == Kind::Other) return text;
    // Above 2^63 - 1 a TOML integer cannot hold an unsigned value: a string of digits can.
    if (kind == Kind::Unsigned && !text.empty() &&
        std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return text;
    }
  }
  return std::nullopt;
}

struct Entry {
  std::string key;  // as written in the file
  std::uint32_t line = 0;
  const toml::node* value = nullptr;
  CLI::Option* option = nullptr;
};

/// "; did you mean 'steps'?" when an option's long name is close to the key.
std::string suggestion(CLI::App& cmd, const std::string& key,
                       const std::set<std::string>& refused) {
  std::vector<std::string> names;
  for (const CLI::Option* opt : cmd.get_options()) {
    if (named_in(*opt, refused)) continue;
    for (const std::string& l : opt->get_lnames()) names.push_back(normalized(l));
  }
  const auto best = closest_name(normalized(key), names);
  return best ? fmt::format("; did you mean '{}'?", *best) : std::string();
}

/// The strings CLI11 receives for an entry; a type error names the option and what it takes.
/// `where` is "FILE:LINE: KEY", `value` the value as written.
std::vector<std::string> option_strings(const Entry& e, const std::string& where,
                                        const std::string& value) {
  const CLI::Option& opt = *e.option;
  const Kind kind = kind_of(opt);
  auto wrong = [&] { return input_error(where, "expects " + expectation(opt), value); };
  std::vector<std::string> out;
  if (const toml::array* items = e.value->as_array()) {
    if (!takes_several(opt)) throw wrong();
    for (const toml::node& item : *items) {
      auto text = scalar_text(item, kind);
      if (!text) throw wrong();
      out.push_back(std::move(*text));
    }
  } else {
    auto text = scalar_text(*e.value, kind);
    if (!text) throw wrong();
    out.push_back(std::move(*text));  // one value for an option of several: an array of one
  }
  // The command line checks how many values follow an option while it parses, which
  // add_result skips: check here.
  const auto n = static_cast<int>(out.size());
  if (takes_several(opt) && n < opt.get_items_expected_min()) {
    throw input_error(
        where, fmt::format("expects at least {} value(s)", opt.get_items_expected_min()), value);
  }
  if (takes_several(opt) && n > opt.get_items_expected_max()) {
    throw input_error(
        where, fmt::format("expects at most {} value(s)", opt.get_items_expected_max()), value);
  }
  return out;
}

/// Gives the value to CLI11 as if typed after the option: its validators and conversion
/// run, the callback stores the value, and count() becomes non-zero. Every error reads
/// "FILE:LINE: KEY: WHAT (got VALUE)".
bool apply_entry(const Entry& e, const std::string& file) {
  CLI::Option& opt = *e.option;
  const std::string where = fmt::format("{}:{}: {}", file, e.line, e.key);
  const std::string value = shown(*e.value);
  std::vector<std::string> values = option_strings(e, where, value);
  // A value equal to the default changes nothing and leaves the option not given: so the
  // used-parameters file, which lists every default, reads back without tripping checks
  // on given options (--restitution without --collisions bounce), and defaults keep the
  // digits that CLI11's 6-digit rendering of them drops.
  if (equals_default(opt, values)) return false;
  try {
    opt.add_result(std::move(values));
    opt.run_callback();
  } catch (const CLI::ConversionError& err) {
    throw input_error(where, "expects " + expectation(opt), value);
  } catch (const CLI::Error& err) {  // nbody's checks (option_checks.cpp) and CLI11's own
    throw Error(restyled(err.what(), opt, where));
  } catch (const Error& err) {  // the library's own check (options.cpp library_check)
    throw Error(restyled(err.what(), opt, where));
  }
  return true;
}

/// Every top-level key in file order, each checked and matched to its option.
std::vector<Entry> read_entries(CLI::App& cmd, const toml::table& root, const std::string& file,
                                const std::set<std::string>& refused) {
  std::vector<Entry> entries;
  for (const auto& [key, value] : root) {
    // Shown in messages: a quoted key may hold any byte.
    entries.push_back({printable(key.str()), key.source().begin.line, &value, nullptr});
  }
  std::stable_sort(entries.begin(), entries.end(),
                   [](const Entry& a, const Entry& b) { return a.line < b.line; });
  for (Entry& e : entries) {
    const std::string where = fmt::format("{}:{}", file, e.line);
    const std::string name = normalized(e.key);
    if (e.value->is_table() || e.value->is_array_of_tables()) {
      throw Error(
          fmt::format("{}: [{}]: tables are not read (no [sections], dotted keys or inline "
                      "tables): write every option at the top level of the file, as KEY = "
                      "VALUE, e.g. theta = 0.5",
                      where, e.key));
    }
    if (name == "config") {
      throw Error(
          fmt::format("{}: config: a config file cannot name another one (no nesting); "
                      "give --config on the command line",
                      where));
    }
    if (name == "help" || name == "help-all") {
      throw Error(fmt::format("{}: {}: not an option for a config file", where, e.key));
    }
    e.option = find_option(cmd, e.key);
    if (refused.count(name) > 0 || (e.option != nullptr && named_in(*e.option, refused))) {
      throw Error(
          fmt::format("{}: {}: {} is not read from a config file (give it on the command line)",
                      where, e.key, e.option != nullptr ? long_name(*e.option) : "--" + name));
    }
    if (e.option == nullptr || e.option->get_lnames().empty()) {
      throw Error(fmt::format("{}: unknown key '{}' ({} has no option --{}){}", where, e.key,
                              command_path(cmd), name, suggestion(cmd, e.key, refused)));
    }
  }
  // The file must be consistent on its own: one key per option, no two that exclude each other.
  for (std::size_t j = 0; j < entries.size(); ++j) {
    for (std::size_t i = 0; i < j; ++i) {
      const Entry& a = entries[i];
      const Entry& b = entries[j];
      if (a.option == b.option) {
        throw Error(fmt::format("{}:{}: {}: {} is already set on line {} ({})", file, b.line, b.key,
                                long_name(*b.option), a.line, a.key));
      }
      if (exclude_each_other(*a.option, *b.option)) {
        throw Error(
            fmt::format("{}:{}: {} and {} (line {}) exclude each other ({} and {}): keep one", file,
                        b.line, b.key, a.key, a.line, long_name(*b.option), long_name(*a.option)));
      }
    }
  }
  return entries;
}

#endif  // NBODY_HAVE_TOML

}  // namespace

std::string restyled(const std::string& message, const CLI::Option& opt, const std::string& where) {
  return restyled_message(message, opt, where).value_or(where + ": " + message);
}

Error blamed_on_config(const Error& error, const std::vector<ConfigSetting>& settings,
                       const std::string& file) {
  for (const ConfigSetting& s : settings) {
    if (auto message = restyled_message(error.what(), *s.option,
                                        fmt::format("{}:{}: {}", file, s.line, s.key))) {
      return Error(*message);
    }
  }
  return error;
}

void add_config_option(CLI::App* cmd, std::string& path) {
  cmd->add_option(
         "--config", path,
         "Read options from this TOML file: KEY = VALUE per option, with the long option "
         "names (t-end = 10, gravity = \"tree\", quadrupole = true); options on the command "
         "line win (see docs/config.md)")
      ->type_name("FILE");
}

std::vector<ConfigSetting> apply_config_file(CLI::App& cmd, const std::filesystem::path& path,
                                             const std::vector<std::string>& refused) {
#if NBODY_HAVE_TOML
  return apply_config_text(cmd, read_config_text(path), path.string(), refused);
#else
  (void)cmd;
  (void)path;
  (void)refused;
  throw Error("--config: nbody was built without toml++ (install libtomlplusplus-dev and rebuild)");
#endif
}

std::vector<ConfigSetting> apply_config_text(CLI::App& cmd, const std::string& text,
                                             const std::string& file,
                                             const std::vector<std::string>& refused) {
#if NBODY_HAVE_TOML
  const std::string ascii = ascii_for_toml(text, file);
  toml::table root;
  try {
    root = toml::parse(ascii, file);
  } catch (const toml::parse_error& err) {
    throw Error(fmt::format("{}:{}: {}", file, err.source().begin.line, err.description()));
  }
  std::set<std::string> refused_names;
  for (const std::string& r : refused) refused_names.insert(normalized(r));
  const std::vector<Entry> entries = read_entries(cmd, root, file, refused_names);

  // The command line wins: an option it gave keeps its value, and an option excluded by
  // one it gave (steps by --t-end, --model by -i) is left out.
  std::vector<ConfigSetting> settings;
  std::vector<const CLI::Option*> given;
  for (const CLI::Option* opt : cmd.get_options()) {
    if (opt->count() > 0) given.push_back(opt);
  }
  for (const Entry& e : entries) {
    const bool overridden = std::any_of(given.begin(), given.end(), [&](const CLI::Option* g) {
      return g == e.option || exclude_each_other(*g, *e.option);
    });
    if (!overridden) settings.push_back({e.option, e.key, e.line, apply_entry(e, file)});
  }
  return settings;
#else
  // Only a checkpoint's own parameters come here without toml++ (apply_config_file refuses
  // --config files first): nbody's own `key = literal` lines.
  (void)refused;
  return apply_written_parameters(cmd, text, file);
#endif
}

}  // namespace nbody::cli
