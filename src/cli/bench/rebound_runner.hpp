#pragma once
// REBOUND beside nbody in the benches (bench small, bench test-particles): a Python script
// run by NBODY_PYTHON (else python3) on bodies written to a temporary text file.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nbody/particles.hpp"

namespace nbody::cli::bench {

/// NBODY_PYTHON when set, else "python3".
[[nodiscard]] std::string python_command();

/// Runs `script` as `python script BODIES ARGS...` (BODIES: the bodies as a text file, x y z
/// vx vy vz m a line) and returns the JSON object it prints on its first line; none when
/// Python or REBOUND is missing or the script fails (`why` says so). The files are removed.
[[nodiscard]] std::optional<nlohmann::ordered_json> run_rebound(
    const char* script, const ParticleSystem& bodies, const std::vector<std::string>& args,
    std::string& why);

}  // namespace nbody::cli::bench
