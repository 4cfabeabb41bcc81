#include "cli/bench/rebound_runner.hpp"

#include <cstdlib>
#include <filesystem>
#include <ostream>

#include <unistd.h>

#include <fmt/format.h>

#include "cli/bench/suite_report.hpp"
#include "core/shell_quote.hpp"
#include "nbody/io.hpp"

namespace nbody::cli::bench {

std::string python_command() {
  const char* p = std::getenv("NBODY_PYTHON");
  return p && *p ? p : "python3";
}

std::optional<nlohmann::ordered_json> run_rebound(const char* script, const ParticleSystem& bodies,
                                                  const std::vector<std::string>& args,
                                                  std::string& why) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path();
  const std::string tag = fmt::format("nbody-bench-rebound-{}", static_cast<long>(::getpid()));
  const fs::path body_file = dir / (tag + ".txt"), script_file = dir / (tag + ".py");
  write_text(body_file, bodies);
  write_file_atomically(script_file, [script](std::ostream& os) { os << script; });
  std::string command =
      fmt::format("{} {} {}", shell_quote(python_command()), shell_quote(script_file.string()),
                  shell_quote(body_file.string()));
  for (const std::string& a : args) command += " " + shell_quote(a);
  const std::string out = first_line_of(command + " 2>/dev/null");
  std::error_code ec;
  fs::remove(body_file, ec);
  fs::remove(script_file, ec);
  try {
    return nlohmann::ordered_json::parse(out);
  } catch (const std::exception&) {
    why = fmt::format("no REBOUND for {} (pip install rebound, or set NBODY_PYTHON)",
                      python_command());
    return std::nullopt;
  }
}

}  // namespace nbody::cli::bench
