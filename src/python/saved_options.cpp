#include "python/saved_options.hpp"

#include <cmath>
#include <sstream>

#include <fmt/format.h>

#include "nbody/error.hpp"
#include "python/python_wording.hpp"

namespace nbody::python {

namespace {

enum class Kind { Number, Integer, Flag, Name };

Kind kind_of(const OptionSpec& spec) {
  const nb::object v = spec.get(RunOptions{});
  if (nb::isinstance<nb::bool_>(v)) return Kind::Flag;
  if (nb::isinstance<nb::int_>(v)) return Kind::Integer;
  if (nb::isinstance<nb::str>(v)) return Kind::Name;
  return Kind::Number;
}

/// A number or name from a file as the Python value the option's setter takes.
nb::object as_python(const OptionSpec& spec, const std::variant<double, std::string>& value,
                     const std::string& file) {
  const Kind kind = kind_of(spec);
  if (kind == Kind::Name) return nb::str(std::get<std::string>(value).c_str());
  const double v = std::get<double>(value);
  if (kind == Kind::Number) return nb::float_(v);
  if (!(std::abs(v) < 2147483648.0) || v != std::floor(v))
    throw Error(fmt::format("{}: parameter {}: must be an integer (got {})", file, spec.name, v));
  if (kind == Kind::Flag) return nb::bool_(v != 0);
  return nb::int_(static_cast<long>(v));
}

void set_from_file(RunOptions& options, const OptionSpec& spec, const nb::object& value,
                   const std::string& file) {
  try {
    spec.set(options, value);
  } catch (const nb::builtin_exception& e) {  // a TypeError of the setter: the file's fault
    throw Error(fmt::format("{}: parameter {}: {}", file, spec.name, e.what()));
  }
}

}  // namespace

std::vector<SnapshotParameter> snapshot_parameters(const RunOptions& options) {
  std::vector<SnapshotParameter> out;
  for (const OptionSpec& spec : option_specs()) {
    const nb::object v = spec.get(options);
    if (nb::isinstance<nb::str>(v)) {
      out.push_back({spec.name, nb::cast<std::string>(v)});
    } else {
      out.push_back({spec.name, nb::cast<double>(v)});
    }
  }
  return out;
}

std::vector<SnapshotParameter> wanted_parameters() {
  return snapshot_parameters(RunOptions{});
}

void apply_parameters(RunOptions& options, const std::vector<SnapshotParameter>& found,
                      const std::string& file) {
  for (const SnapshotParameter& p : found) {
    const OptionSpec* spec = find_option(p.name);
    if (spec) set_from_file(options, *spec, as_python(*spec, p.value, file), file);
  }
}

std::string parameters_toml(const RunOptions& options) {
  std::string out =
      "# The run options of a Python nbody.Simulation (sim.save_checkpoint), under the names of "
      "`nbody run`\n";
  for (const OptionSpec& spec : option_specs()) {
    const nb::object v = spec.get(options);
    std::string literal;
    if (nb::isinstance<nb::bool_>(v)) {
      literal = nb::cast<bool>(v) ? "true" : "false";
    } else if (nb::isinstance<nb::str>(v)) {
      literal = "\"" + nb::cast<std::string>(v) + "\"";
    } else if (nb::isinstance<nb::int_>(v)) {
      literal = std::to_string(nb::cast<long>(v));
    } else {
      literal = fmt::format("{}", nb::cast<double>(v));  // shortest round-trip form
    }
    out += fmt::format("{} = {}\n", cli_name(spec.name), literal);
  }
  return out;
}

void apply_parameters_toml(RunOptions& options, const std::string& toml, const std::string& file) {
  std::istringstream lines(toml);
  for (std::string line; std::getline(lines, line);) {
    const auto eq = line.find('=');
    if (line.empty() || line[0] == '#' || eq == std::string::npos) continue;
    auto trim = [](std::string s) {
      const auto a = s.find_first_not_of(" \t");
      const auto b = s.find_last_not_of(" \t\r");
      return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
    };
    const std::string key = python_name(trim(line.substr(0, eq)));
    const std::string text = trim(line.substr(eq + 1));
    const OptionSpec* spec = find_option(key);
    if (!spec || text.empty()) continue;
    std::variant<double, std::string> value;
    if (text.front() == '"' && text.size() >= 2 && text.back() == '"') {
      value = text.substr(1, text.size() - 2);
    } else if (text == "true" || text == "false") {
      value = text == "true" ? 1.0 : 0.0;
    } else {
      char* end = nullptr;
      const double v = std::strtod(text.c_str(), &end);
      if (end != text.c_str() + text.size())
        throw Error(
            fmt::format("{}: parameter {}: cannot read the value (got {})", file, key, text));
      value = v;
    }
    if (kind_of(*spec) == Kind::Name && !std::holds_alternative<std::string>(value))
      throw Error(
          fmt::format("{}: parameter {}: expected a quoted name (got {})", file, key, text));
    if (kind_of(*spec) != Kind::Name && std::holds_alternative<std::string>(value))
      throw Error(fmt::format("{}: parameter {}: expected a number (got {})", file, key, text));
    set_from_file(options, *spec, as_python(*spec, value, file), file);
  }
}

}  // namespace nbody::python
