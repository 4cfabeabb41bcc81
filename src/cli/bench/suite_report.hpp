#pragma once
// The results of one `nbody bench SUITE -o DIR` suite as a table, written as DIR/SUITE.csv
// and DIR/SUITE.json (atomically), printed as a table, and turned into PNG plots and a
// section of DIR/report.md by python/nbody_bench_report.py (the JSON is its input: see
// the docstring there for the format).
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/bench/bench_common.hpp"

namespace nbody::cli::bench {

struct SuiteResult {
  std::string suite;
  std::string title;
  nlohmann::ordered_json meta = nlohmann::ordered_json::object();
  std::vector<std::string> columns;
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();  // arrays, one value per column
  nlohmann::ordered_json plots = nlohmann::ordered_json::array();
  std::vector<std::string> notes;

  void add_row(nlohmann::ordered_json row) { rows.push_back(std::move(row)); }
};

/// The first line a shell command prints ("" when it fails or prints nothing).
[[nodiscard]] std::string first_line_of(const std::string& command);

/// A suite without -o: the table and the notes on `out` (and with `json`, the suite's JSON on
/// stdout).
void print_suite_console(const SuiteResult& r, std::FILE* out, bool json);

/// What every suite's labels start with: CPU model and threads, GPU name (or null),
/// --device, git revision, UTC date, --quick.
[[nodiscard]] nlohmann::ordered_json base_meta(const BenchArgs& a);

/// The devices a suite runs on for --device cpu|gpu|all ("all": the GPU only when one is
/// usable). Throws nbody::Error for --device gpu without a usable GPU.
[[nodiscard]] std::vector<std::string> bench_devices(const BenchArgs& a);

/// A script of the source tree: the environment variable `env` when set, else
/// NBODY_SOURCE_DIR/`relative` (python/nbody_bench_report.py, bench/tree_pareto.py).
[[nodiscard]] std::string source_script(const char* env, const std::string& relative);

/// Runs `python3 SCRIPT ARGS...` with its stdout sent to stderr. Returns "" when it ran and
/// exited with status 0, otherwise why not (script missing, no python3, its exit status).
[[nodiscard]] std::string run_python_script(const std::string& script,
                                            const std::vector<std::string>& args);

/// Prints the table to `human`, writes DIR/SUITE.csv and DIR/SUITE.json, then runs the
/// report script (plots + report.md); says so when Python or matplotlib is missing.
void write_suite(const SuiteResult& r, const BenchArgs& a, std::FILE* human);

}  // namespace nbody::cli::bench
