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

/// The text handed to toml++: pure ASCII, with the same meaning. toml++ 3.3 reaches
/// undefined behaviour ("unreachable program point" under UBSan, in
/// is_non_ascii_horizontal_whitespace) on many non-ASCII code points wherever it looks for
/// whitespace, which a scan of where strings begin cannot foresee (two fuzz regressions:
/// `é = 1`, `n =1i4"é`). So toml++ never sees a byte above 0x7f: inside basic strings a
/// UTF-8 character becomes its \uXXXX escape (a path "résultats/run.h5" keeps working), in
/// comments a '?', and anywhere else (keys, values, literal 'strings', which have no
/// escapes) it is refused with the file and line. Line numbers are kept.
std::string ascii_for_toml(const std::string& text, const std::string& file) {
  enum class State { Normal, Comment, Basic, Literal, MultiBasic, MultiLiteral };
  State state = State::Normal;
  std::uint32_t line = 1;
  std::string out;
  out.reserve(text.size());
  const auto starts = [&](std::size_t i, const char* s) { return text.compare(i, 3, s) == 0; };
  const auto refuse = [&](std::size_t i, const char* where) {
    return Error(fmt::format("{}:{}: a non-ASCII byte {} (got {})", file, line, where,
                             printable(std::string_view(text).substr(i, 1))));
  };
  // One UTF-8 character from text[i] as a TOML escape; i moves to its last byte.
  const auto escape_utf8 = [&](std::size_t& i) {
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned char lead = byte(i);
    const std::size_t length = lead >= 0xf0 && lead <= 0xf4   ? 4
                               : lead >= 0xe0 && lead < 0xf0  ? 3
                               : lead >= 0xc2 && lead <= 0xdf ? 2
                                                              : 0;
    if (length == 0 || i + length > text.size()) throw refuse(i, "that is not UTF-8");
    char32_t code = lead & (0x7fu >> length);
    for (std::size_t k = 1; k < length; ++k) {
      if ((byte(i + k) & 0xc0) != 0x80) throw refuse(i, "that is not UTF-8");
      code = (code << 6) | (byte(i + k) & 0x3fu);
    }
    const char32_t smallest = length == 2 ? 0x80 : length == 3 ? 0x800 : 0x10000;
    if (code < smallest || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) {
      throw refuse(i, "that is not UTF-8");
    }
    i += length - 1;
    return code <= 0xffff ? fmt::format("\\u{:04x}", static_cast<unsigned>(code))
                          : fmt::format("\\U{:08x}", static_cast<unsigned>(code));
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const bool ascii = static_cast<unsigned char>(c) < 0x80;
    if (c == '\n') {
      ++line;
      if (state == State::Comment || state == State::Basic || state == State::Literal)
        state = State::Normal;  // a one-line string cut by the line end: toml++ says so
      out += c;
      continue;
    }
    switch (state) {
      case State::Normal:
        if (!ascii)
          throw refuse(i, "outside a string or comment (keys are option names, in ASCII)");
        if (c == '#') {
          state = State::Comment;
        } else if (starts(i, "\"\"\"")) {
          state = State::MultiBasic;
          out += "\"\"";
          i += 2;
        } else if (starts(i, "'''")) {
          state = State::MultiLiteral;
          out += "''";
          i += 2;
        } else if (c == '"') {
          state = State::Basic;
        } else if (c == '\'') {
          state = State::Literal;
        }
        out += c;
        break;
      case State::Comment:
        out += ascii ? c : '?';
        break;
      case State::Basic:
      case State::MultiBasic:
        if (!ascii) {
          out += escape_utf8(i);
        } else if (c == '\\') {
          out += c;
          if (i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80) {
            throw refuse(i + 1, "after a backslash (not an escape TOML knows)");
          }
          if (i + 1 < text.size() && text[i + 1] != '\n') out += text[++i];  // escaped

        } else if (state == State::Basic && c == '"') {
          state = State::Normal;
          out += c;
        } else if (state == State::MultiBasic && starts(i, "\"\"\"")) {
          state = State::Normal;
          out += "\"\"\"";
          i += 2;
        } else {
          out += c;
        }
        break;
      case State::Literal:
      case State::MultiLiteral:
        if (!ascii) {
          throw refuse(i, "in a '...' string (write non-ASCII text in a \"...\" string)");
        }
        if (state == State::Literal && c == '\'') {
          state = State::Normal;
        } else if (state == State::MultiLiteral && starts(i, "'''")) {
          state = State::Normal;
          out += "''";
          i += 2;
        }
        out += c;
        break;
    }
  }
  return out;
}

/// The option a key names: a long name ("t-end", "t_end"), else a one-letter short name ("n").
CLI::Option* find_option(CLI::App& cmd, const std::string& key) {
  const std::string want = normalized(key);
  const auto options = cmd.get_options();
  for (CLI::Option* opt : options) {
    for (const std::string& l : opt->get_lnames()) {
      if (normalized(l) == want) return opt;
    }
  }
  for (CLI::Option* opt : options) {
    for (const std::string& s : opt->get_snames()) {
      if (s == want) return opt;
    }
  }
  return nullptr;
}

/// Whether values are the option's default (compared as TOML, so 1 == 1.0 for a number).
bool equals_default(const CLI::Option& opt, const std::vector<std::string>& values) {
  const auto defaults = default_values(opt);
  if (!defaults || defaults->size() != values.size()) return false;
  const Kind kind = kind_of(opt);
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (toml_literal((*defaults)[i], kind) != toml_literal(values[i], kind)) return false;
  }
  return true;
}

}  // namespace nbody::cli::config_detail
