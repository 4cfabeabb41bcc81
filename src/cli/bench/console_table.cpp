// The console form of a suite without -o (bench timestep, bench small): the table, the
// notes, and with --json the suite's JSON on stdout.
#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/bench/suite_report.hpp"

namespace nbody::cli::bench {

using json = nlohmann::ordered_json;

void print_suite_console(const SuiteResult& r, std::FILE* out, bool as_json) {
  auto text = [](const json& v) -> std::string {
    if (v.is_null()) return "-";
    if (v.is_string()) return v.get<std::string>();
    if (v.is_number_float()) return fmt::format("{:.4g}", v.get<double>());
    return v.dump();
  };
  std::vector<std::size_t> width;
  for (const auto& c : r.columns) width.push_back(c.size());
  for (const auto& row : r.rows)
    for (std::size_t c = 0; c < width.size(); ++c)
      width[c] = std::max(width[c], text(row[c]).size());
  fmt::print(out, "\n{} ({})\n", r.title, r.suite);
  for (std::size_t c = 0; c < width.size(); ++c) fmt::print(out, "{:>{}} ", r.columns[c], width[c]);
  fmt::print(out, "\n");
  for (const auto& row : r.rows) {
    for (std::size_t c = 0; c < width.size(); ++c)
      fmt::print(out, "{:>{}} ", text(row[c]), width[c]);
    fmt::print(out, "\n");
  }
  for (const auto& note : r.notes) fmt::print(out, "note: {}\n", note);
  std::fflush(out);
  if (as_json) {
    const json j = {{"suite", r.suite},     {"title", r.title}, {"meta", r.meta},
                    {"columns", r.columns}, {"rows", r.rows},   {"notes", r.notes}};
    fmt::print("{}\n", j.dump(2));
  }
}

}  // namespace nbody::cli::bench
