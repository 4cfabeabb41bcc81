// The option names, value kinds and TOML text shared by the config-file reader
// (config_file.cpp) and the used-parameters writer (used_parameters.cpp).
#include <CLI/CLI.hpp>

#include "cli/config_options.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <sstream>

#include <fmt/format.h>

#include "nbody/error.hpp"
#include "nbody/input_error.hpp"

namespace nbody::cli::config_detail {

// ---- Option names and value kinds (shared by the reader and the writer) -------------

/// "--t_end" -> "t-end": keys may spell dashes as underscores (TOML and YAML habit).
std::string normalized(std::string_view name) {
  while (!name.empty() && name.front() == '-') name.remove_prefix(1);
  std::string out(name);
  std::replace(out.begin(), out.end(), '_', '-');
  return out;
}

bool named_in(const CLI::Option& opt, const std::set<std::string>& names) {
  return std::any_of(opt.get_lnames().begin(), opt.get_lnames().end(),
                     [&](const std::string& l) { return names.count(normalized(l)) > 0; });
}

/// Callers only pass options that have a long name.
std::string long_name(const CLI::Option& opt) {
  return "--" + opt.get_lnames().front();
}

bool exclude_each_other(const CLI::Option& a, const CLI::Option& b) {
  const auto ea = a.get_excludes();
  const auto eb = b.get_excludes();
  return std::any_of(ea.begin(), ea.end(), [&](const CLI::Option* o) { return o == &b; }) ||
         std::any_of(eb.begin(), eb.end(), [&](const CLI::Option* o) { return o == &a; });
}

Kind kind_of(const CLI::Option& opt) {
  if (opt.get_expected_max() == 0) return Kind::Flag;  // add_flag sets expected(0)
  std::string type = opt.get_type_name();
  type = type.substr(0, type.find(':'));
  if (type == "BOOLEAN") return Kind::Boolean;
  if (type == "INT") return Kind::Integer;
  if (type == "UINT") return Kind::Unsigned;
  if (type == "FLOAT" || type == "NUMBER") return Kind::Number;
  if (type == "TEXT") return Kind::Text;
  return Kind::Other;
}

bool takes_several(const CLI::Option& opt) {
  return opt.get_items_expected_max() > 1;
}

// ---- TOML text ------------------------------------------------------------------------

std::string toml_string(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += {'\\', c};
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (byte < 0x20 || byte == 0x7f) {
      out += fmt::format("\\u{:04X}", unsigned{byte});
    } else {
      out += c;
    }
  }
  return out + '"';
}

/// Shortest text that reads back to the same double, always a TOML float ("5.0", not "5").
std::string toml_float(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  std::string s = fmt::format("{}", d);
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

std::string toml_key(const std::string& key) {
  const bool bare = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_';
  });
  return bare ? key : toml_string(key);
}

namespace {

/// CLI11's reading of a flag's value ("true", "1", "-1" for a negated flag, ...).
bool flag_value(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](char c) { return char(std::tolower(static_cast<unsigned char>(c))); });
  if (s.empty() || s == "true" || s == "on" || s == "yes" || s == "enable" || s == "+") return true;
  if (s == "false" || s == "off" || s == "no" || s == "disable" || s == "-") return false;
  return std::strtoll(s.c_str(), nullptr, 0) > 0;
}

}  // namespace

/// The TOML literal of one of CLI11's value strings for an option of this kind. Numbers
/// are parsed the way CLI11 parses them (so "0x10" and "1e-2" are written as 16 and 0.01).
std::string toml_literal(const std::string& value, Kind kind) {
  switch (kind) {
    case Kind::Flag:
    case Kind::Boolean:
      return flag_value(value) ? "true" : "false";
    case Kind::Integer: {
      std::int64_t i = 0;
      if (CLI::detail::lexical_cast(value, i)) return fmt::format("{}", i);
      break;
    }
    case Kind::Unsigned: {
      std::uint64_t u = 0;
      if (CLI::detail::lexical_cast(value, u)) {
        // TOML integers are 64-bit signed: larger values become strings of digits.
        return u <= std::uint64_t(std::numeric_limits<std::int64_t>::max())
                   ? fmt::format("{}", u)
                   : toml_string(fmt::format("{}", u));
      }
      break;
    }
    case Kind::Number: {
      double d = 0;
      if (CLI::detail::lexical_cast(value, d)) return toml_float(d);
      break;
    }
    case Kind::Text:
    case Kind::Other:
      break;
  }
  return toml_string(value);
}

std::string command_path(const CLI::App& cmd) {
  std::string path = cmd.get_name();
  for (const CLI::App* app = cmd.get_parent(); app != nullptr; app = app->get_parent()) {
    if (!app->get_name().empty()) path = app->get_name() + (path.empty() ? "" : " " + path);
  }
  return path;
}

/// The default as value strings: CLI11's default string (a container's as [a,b,c]); a flag
/// that was not given is false.
std::optional<std::vector<std::string>> default_values(const CLI::Option& opt) {
  const std::string def = opt.get_default_str();
  if (!def.empty()) {
    if (takes_several(opt) && def.size() >= 2 && def.front() == '[' && def.back() == ']') {
      std::vector<std::string> values;
      std::stringstream items(def.substr(1, def.size() - 2));
      for (std::string item; std::getline(items, item, ',');) values.push_back(item);
      if (values.empty()) return std::nullopt;
      return values;
    }
    return std::vector<std::string>{def};
  }
  if (kind_of(opt) == Kind::Flag) return std::vector<std::string>{"false"};
  return std::nullopt;
}

/// The value in effect: the command line's or the config file's, else the default.
std::optional<std::vector<std::string>> values_in_effect(const CLI::Option& opt) {
  if (opt.count() > 0) {
    std::vector<std::string> values = opt.reduced_results();
    if (!takes_several(opt) && values.size() > 1) values.erase(values.begin(), values.end() - 1);
    if (values.empty()) values.emplace_back();
    return values;
  }
  return default_values(opt);
}

/// Refuses a byte outside printable ASCII where TOML allows none (keys, values, the space
/// between them): toml++ 3.3 reaches undefined behaviour ("unreachable program point" under
/// UBSan) on a non-ASCII bare key. Strings and comments may hold any UTF-8 (a path
/// "résultats/run.h5"), so they are skipped: basic and literal strings, one-line or
/// multi-line, and # comments.
void check_ascii_outside_strings(const std::string& text, const std::string& file) {
  enum class State { Normal, Comment, Basic, Literal, MultiBasic, MultiLiteral };
  State state = State::Normal;
  std::uint32_t line = 1;
  const auto starts = [&](std::size_t i, const char* s) { return text.compare(i, 3, s) == 0; };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\n') {
      ++line;
      if (state == State::Comment || state == State::Basic || state == State::Literal)
        state = State::Normal;  // a one-line string cut by the line end: toml++ says so
      continue;
    }
    switch (state) {
      case State::Normal:
        if (byte >= 0x80) {
          throw Error(fmt::format(
              "{}:{}: a non-ASCII byte outside a string or comment (keys are option names, "
              "in ASCII) (got {})",
              file, line, printable(std::string_view(text).substr(i, 1))));
        }
        if (c == '#') {
          state = State::Comment;
        } else if (starts(i, "\"\"\"")) {
          state = State::MultiBasic;
          i += 2;
        } else if (starts(i, "'''")) {
          state = State::MultiLiteral;
          i += 2;
        } else if (c == '"') {
          state = State::Basic;
        } else if (c == '\'') {
          state = State::Literal;
        }
        break;
      case State::Comment:
        break;
      case State::Basic:
      case State::MultiBasic:
        if (c == '\\') {
          if (i + 1 < text.size() && text[i + 1] != '\n') ++i;  // an escaped character
        } else if (state == State::Basic && c == '"') {
          state = State::Normal;
        } else if (state == State::MultiBasic && starts(i, "\"\"\"")) {
          state = State::Normal;
          i += 2;
        }
        break;
      case State::Literal:
        if (c == '\'') state = State::Normal;
        break;
      case State::MultiLiteral:
        if (starts(i, "'''")) {
          state = State::Normal;
          i += 2;
        }
        break;
    }
  }
}

}  // namespace nbody::cli::config_detail
