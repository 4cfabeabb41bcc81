#pragma once
// --restart: which checkpoint to continue from, and the warning when the command now asks
// for other physics or numerics than the checkpoint's run used.
#include <filesystem>
#include <optional>
#include <string>

namespace nbody::cli {

/// A restart with other physics or numerics than the checkpoint's run is allowed (a user
/// may mean to change dt), but it will not reproduce the uninterrupted run: warns on stderr
/// for each such key of the two used-parameters texts.
void warn_changed_parameters(const std::string& before, const std::string& now);

/// The checkpoint --restart names: a file, a folder's latest, or "latest" in the output
/// folder (nothing when there is none yet: the run starts fresh). Throws nbody::Error for a
/// missing file or a folder without checkpoints.
[[nodiscard]] std::optional<std::filesystem::path> restart_file(
    const std::string& restart, const std::filesystem::path& output_dir);

}  // namespace nbody::cli
