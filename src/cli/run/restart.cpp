#include "cli/run/restart.hpp"

#include <map>
#include <sstream>

#include <fmt/format.h>

#include "cli/run/run_files.hpp"
#include "nbody/error.hpp"
#include "nbody/input_error.hpp"

namespace nbody::cli {

namespace fs = std::filesystem;

namespace {

/// `key = value` lines of a used-parameters file (comments and blank lines skipped).
std::map<std::string, std::string> parameter_lines(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const auto eq = line.find(" = ");
    if (eq != std::string::npos) out[line.substr(0, eq)] = line.substr(eq + 3);
  }
  return out;
}

}  // namespace

void warn_changed_parameters(const std::string& before, const std::string& now) {
  static const char* kTrajectoryKeys[] = {"dt",
                                          "gravity",
                                          "kernel",
                                          "precision",
                                          "softening",
                                          "G",
                                          "theta",
                                          "quadrupole",
                                          "mac",
                                          "alpha",
                                          "integrator",
                                          "damping",
                                          "timestep",
                                          "eta",
                                          "dt-min",
                                          "collisions",
                                          "restitution",
                                          "collision-iterations",
                                          "dim",
                                          "device",
                                          "deterministic",
                                          "block-size",
                                          "energy",
                                          "ias15-epsilon",
                                          "ias15-adaptive"};
  const auto old_values = parameter_lines(before);
  const auto new_values = parameter_lines(now);
  for (const char* key : kTrajectoryKeys) {
    const auto o = old_values.find(key);
    const auto n = new_values.find(key);
    if (o == old_values.end() || n == new_values.end() || o->second == n->second) continue;
    if (std::string_view(key) == "energy" && n->second == "\"auto\"") continue;  // kept
    fmt::print(stderr,
               "nbody: warning: --restart: {} is {} now but was {} in the checkpoint's run; the "
               "result will not "
               "match an uninterrupted run\n",
               key, printable(n->second), printable(o->second));
  }
}

std::optional<fs::path> restart_file(const std::string& restart, const fs::path& output_dir) {
  if (restart.empty()) return std::nullopt;
  if (restart == "latest") return latest_checkpoint(output_dir);
  // status with an error code: a name too long or a folder without permission is a
  // message, not an exception from std::filesystem.
  std::error_code ec;
  const fs::file_status status = fs::status(restart, ec);
  if (fs::is_directory(status)) {
    auto found = latest_checkpoint(restart);
    if (!found) throw input_error("--restart", "no checkpoint_* file in this folder", restart);
    return found;
  }
  if (!fs::exists(status)) {
    throw input_error("--restart",
                      ec && ec != std::errc::no_such_file_or_directory
                          ? "cannot read it (" + ec.message() + ")"
                          : std::string("no such file or folder"),
                      restart);
  }
  return fs::path(restart);
}

}  // namespace nbody::cli
