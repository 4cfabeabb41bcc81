#include "python/python_wording.hpp"

#include <cctype>
#include <cstdlib>
#include <utility>

namespace nbody::python {

namespace {

// CLI name -> Python name where the rule ('-' -> '_') does not give it.
constexpr std::pair<std::string_view, std::string_view> kRenamed[] = {
    {"energy", "energy_method"},
    {"t-end", "t"},
    {"steps", "count"},
    {"count", "n"},
    {"restart", "checkpoint"},
    {"stats-every", "stats_every"},
    {"test-particle-type", "testparticle_type"},  // REBOUND's name, sim.testparticle_type
};

// Words that follow a flag as its value in the library's messages ("needs --precision
// double"); any other word after a flag is ordinary text ("--dt and ...").
constexpr std::string_view kValues[] = {
    "direct", "tree",     "none",   "cpu",      "gpu",          "float",     "double",   "auto",
    "fixed",  "adaptive", "ias15",  "leapfrog", "euler",        "kinematic", "bounce",   "merge",
    "fast",   "scalar",   "naive",  "tiled",    "geometric",    "bmax",      "relative", "exact",
    "solver", "off",      "global", "prs23",    "hierarchical",
};

bool flag_char(char c) {
  return std::islower(static_cast<unsigned char>(c)) ||
         std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == 'G';
}

bool is_number(std::string_view word) {
  if (word.empty()) return false;
  const std::string text(word);
  char* end = nullptr;
  std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size();
}

bool is_value(std::string_view word) {
  for (std::string_view v : kValues)
    if (word == v) return true;
  return is_number(word);
}

}  // namespace

std::string python_name(std::string_view cli) {
  for (const auto& [from, to] : kRenamed)
    if (cli == from) return std::string(to);
  std::string out(cli);
  for (char& c : out) c = c == '-' ? '_' : c;
  return out;
}

std::string cli_name(std::string_view python) {
  if (python == "energy_method") return "energy";
  std::string out(python);
  for (char& c : out) c = c == '_' ? '-' : c;
  return out;
}

std::string python_wording(std::string_view m) {
  std::string out;
  out.reserve(m.size());
  std::size_t i = 0;
  while (i < m.size()) {
    // A flag: "--" at the start or after a space or bracket, then a letter.
    const bool starts = m.compare(i, 2, "--") == 0 && i + 2 < m.size() &&
                        (std::islower(static_cast<unsigned char>(m[i + 2])) || m[i + 2] == 'G') &&
                        (i == 0 || m[i - 1] == ' ' || m[i - 1] == '(' || m[i - 1] == '`');
    if (!starts) {
      out += m[i++];
      continue;
    }
    std::size_t end = i + 2;
    while (end < m.size() && flag_char(m[end])) ++end;
    const std::string name = python_name(m.substr(i + 2, end - i - 2));
    // "--flag value": a value word (not one that ends a clause with ':' or ',').
    std::size_t word_end = end + 1;
    if (end < m.size() && m[end] == ' ') {
      while (word_end < m.size() && m[word_end] != ' ' && m[word_end] != ')' &&
             m[word_end] != ',' && m[word_end] != ':' && m[word_end] != ';')
        ++word_end;
      const std::string_view word = m.substr(end + 1, word_end - end - 1);
      if (is_value(word)) {
        out += name + "=" + (is_number(word) ? std::string(word) : "'" + std::string(word) + "'");
        i = word_end;
        continue;
      }
    }
    out += name;
    i = end;
  }
  return out;
}

}  // namespace nbody::python
