#include "viewer/input_script.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "nbody/error.hpp"
#include "nbody/input_error.hpp"

namespace nbody::viewer {

namespace {

using Kind = ScriptAction::Kind;

// Action name -> kind and how many numbers follow it (at least, at most).
struct Syntax {
  Kind kind;
  int numbers, optional = 0;
};
const std::map<std::string, Syntax>& syntax() {
  static const std::map<std::string, Syntax> table = {
      {"click", {Kind::Click, 2}}, {"disc", {Kind::Disc, 2, 1}},
      {"pick", {Kind::Pick, 2}},   {"scroll", {Kind::Scroll, 3}},
      {"pause", {Kind::Pause, 0}}, {"resume", {Kind::Resume, 0}},
      {"step", {Kind::Step, 0}},   {"reset", {Kind::ResetCamera, 0}}};
  return table;
}

double parse_number(const std::string& word, const std::string& where) {
  double value = 0;
  const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), value);
  if (ec != std::errc() || end != word.data() + word.size()) {
    throw Error(fmt::format("{}: '{}' is not a number", where, word));
  }
  return value;
}

}  // namespace

std::vector<ScriptAction> read_input_script(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw input_error("--script", "cannot open the file", path);
  std::vector<ScriptAction> actions;
  std::string line;
  for (int line_no = 1; std::getline(in, line); ++line_no) {
    const std::string where = fmt::format("{}:{}", path, line_no);
    if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::vector<std::string> w;
    for (std::string word; words >> word;) w.push_back(word);
    if (w.empty()) continue;
    if (w.size() < 3 || w[0] != "frame") {
      throw Error(fmt::format("{}: expected 'frame N ACTION ...' (got '{}')", where, line));
    }
    ScriptAction a;
    const double frame = parse_number(w[1], where);
    if (!(frame >= 1) || frame != static_cast<double>(static_cast<std::uint64_t>(frame))) {
      throw Error(fmt::format("{}: the frame must be a whole number >= 1 (got {})", where, w[1]));
    }
    a.frame = static_cast<std::uint64_t>(frame);
    const auto found = syntax().find(w[2]);
    if (found == syntax().end()) {
      throw Error(fmt::format(
          "{}: unknown action '{}' (click, disc, pick, scroll, pause, resume, step, reset)", where,
          w[2]));
    }
    a.kind = found->second.kind;
    const auto least = static_cast<std::size_t>(found->second.numbers);
    const auto most = least + static_cast<std::size_t>(found->second.optional);
    if (w.size() < 3 + least || w.size() > 3 + most) {
      throw Error(fmt::format(
          "{}: '{}' takes {} number(s)", where, w[2],
          least == most ? fmt::format("{}", least) : fmt::format("{} to {}", least, most)));
    }
    if (w.size() >= 5) {
      a.x = parse_number(w[3], where);
      a.y = parse_number(w[4], where);
    }
    if (w.size() == 6) a.amount = parse_number(w[5], where);
    if (a.kind == Kind::Disc && (a.amount < 0 || a.amount != std::floor(a.amount))) {
      throw Error(fmt::format("{}: the disc's body count must be a whole number", where));
    }
    actions.push_back(a);
  }
  std::stable_sort(actions.begin(), actions.end(),
                   [](const ScriptAction& l, const ScriptAction& r) { return l.frame < r.frame; });
  return actions;
}

}  // namespace nbody::viewer
