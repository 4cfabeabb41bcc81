// Writing a bench suite's results: table on the terminal, CSV + JSON in the output folder,
// then the plots and the report section through the Python script.
#include "cli/bench/suite_report.hpp"

#include <array>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <memory>

#include <sys/wait.h>

#include <fmt/format.h>

#include "nbody/build_info.hpp"
#include "nbody/error.hpp"
#include "nbody/input_error.hpp"
#include "nbody/io.hpp"

#ifndef NBODY_SOURCE_DIR
#define NBODY_SOURCE_DIR "."
#endif

namespace nbody::cli::bench {

/// The output of a shell command's first line ("" when it fails).
std::string first_line_of(const std::string& command) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) return "";
  std::array<char, 256> buf{};
  std::string line;
  if (std::fgets(buf.data(), int(buf.size()), pipe.get())) line = buf.data();
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
  return line;
}

namespace {

std::string git_revision() {
  // A copy of the tree without its own history (the GPU machine's) can name the revision.
  if (const char* r = std::getenv("NBODY_GIT_REVISION")) return r;
  const std::string rev = first_line_of(
      fmt::format("git -C '{}' rev-parse --short HEAD 2>/dev/null", NBODY_SOURCE_DIR));
  return rev.empty() ? "unknown" : rev;
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string cell_text(const nlohmann::ordered_json& v) {
  if (v.is_null()) return "";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_float()) return fmt::format("{:.4g}", v.get<double>());
  return v.dump();
}

std::string csv_cell(const nlohmann::ordered_json& v) {
  if (v.is_null()) return "";
  if (v.is_string()) {
    std::string s = v.get<std::string>();
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  }
  if (v.is_number_float()) return fmt::format("{:.9g}", v.get<double>());
  return v.dump();
}

std::string report_script() {
  return source_script("NBODY_REPORT_SCRIPT", "python/nbody_bench_report.py");
}

/// `text` as one word for the shell: in single quotes, each ' written '\''.
std::string shell_quoted(const std::string& text) {
  std::string q = "'";
  for (const char c : text) {
    if (c == '\'')
      q += "'\\''";
    else
      q += c;
  }
  q += '\'';
  return q;
}

}  // namespace

std::string source_script(const char* env, const std::string& relative) {
  if (const char* s = std::getenv(env)) return s;
  return std::string(NBODY_SOURCE_DIR) + "/" + relative;
}

std::string run_python_script(const std::string& script, const std::vector<std::string>& args) {
  if (!std::filesystem::exists(script)) return fmt::format("{} not found", script);
  if (first_line_of("command -v python3").empty()) return "python3 is not installed";
  std::string command = "python3 " + shell_quoted(script);
  for (const std::string& arg : args) {
    command += ' ';
    command += shell_quoted(arg);
  }
  std::fflush(stdout);
  std::fflush(stderr);
  const int status = std::system((command + " 1>&2").c_str());
  if (status == 0) return "";
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : status;
  return fmt::format("{} exited with status {}", script, code);
}

nlohmann::ordered_json base_meta(const BenchArgs& a) {
  const BuildInfo info = build_info();
  const std::vector<GpuDevice> gpus = gpu_devices();
  nlohmann::ordered_json m;
  m["cpu"] = info.cpu_model;
  m["threads"] = info.max_threads;
  m["gpu"] =
      gpus.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(gpus.front().name);
  m["device"] = a.device;
  m["git"] = git_revision();
  m["date"] = utc_now();
  m["quick"] = a.quick;
  return m;
}

std::vector<std::string> bench_devices(const BenchArgs& a) {
  std::string reason;
  const bool gpu = !gpu_devices(&reason).empty();
  if (a.device == "gpu") {
    if (!gpu) throw input_error("--device", reason, "gpu");
    return {"gpu"};
  }
  if (a.device == "all")
    return gpu ? std::vector<std::string>{"cpu", "gpu"} : std::vector<std::string>{"cpu"};
  return {"cpu"};
}

void write_suite(const SuiteResult& r, const BenchArgs& a, std::FILE* human) {
  // The table.
  std::vector<std::size_t> width(r.columns.size());
  for (std::size_t c = 0; c < r.columns.size(); ++c) width[c] = r.columns[c].size();
  for (const auto& row : r.rows) {
    for (std::size_t c = 0; c < r.columns.size() && c < row.size(); ++c) {
      width[c] = std::max(width[c], cell_text(row[c]).size());
    }
  }
  fmt::print(human, "\n{} ({})\n", r.title, r.suite);
  for (std::size_t c = 0; c < r.columns.size(); ++c)
    fmt::print(human, "{:>{}} ", r.columns[c], width[c]);
  fmt::print(human, "\n");
  for (const auto& row : r.rows) {
    for (std::size_t c = 0; c < r.columns.size() && c < row.size(); ++c) {
      fmt::print(human, "{:>{}} ", cell_text(row[c]), width[c]);
    }
    fmt::print(human, "\n");
  }
  for (const auto& note : r.notes) fmt::print(human, "note: {}\n", note);
  std::fflush(human);

  // CSV and JSON.
  const std::filesystem::path dir = a.output_dir;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    throw input_error("--output", fmt::format("cannot create the folder ({})", ec.message()),
                      dir.string());
  write_file_atomically(dir / (r.suite + ".csv"), [&](std::ostream& out) {
    for (std::size_t c = 0; c < r.columns.size(); ++c) out << (c ? "," : "") << r.columns[c];
    out << "\n";
    for (const auto& row : r.rows) {
      for (std::size_t c = 0; c < row.size(); ++c) out << (c ? "," : "") << csv_cell(row[c]);
      out << "\n";
    }
  });
  nlohmann::ordered_json j = {{"suite", r.suite},     {"title", r.title}, {"meta", r.meta},
                              {"columns", r.columns}, {"rows", r.rows},   {"plots", r.plots},
                              {"notes", r.notes}};
  write_file_atomically(dir / (r.suite + ".json"),
                        [&](std::ostream& out) { out << j.dump(2) << "\n"; });
  fmt::print(human, "wrote {} and {}\n", (dir / (r.suite + ".csv")).string(),
             (dir / (r.suite + ".json")).string());

  // Plots and the report section.
  const std::string script = report_script();
  if (!std::filesystem::exists(script)) {
    fmt::print(human, "plots skipped: {} not found (set NBODY_REPORT_SCRIPT)\n", script);
    return;
  }
  if (first_line_of("command -v python3").empty()) {
    fmt::print(human, "plots skipped: python3 is not installed (the CSV and JSON are written)\n");
    return;
  }
  std::fflush(human);
  const int status = std::system(
      fmt::format("python3 '{}' '{}' '{}' 1>&2", script, dir.string(), r.suite).c_str());
  if (status != 0) {
    fmt::print(human, "plots: {} exited with status {} (the CSV and JSON are written)\n", script,
               status);
  }
}

}  // namespace nbody::cli::bench
