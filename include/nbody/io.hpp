#pragma once
// Particle files. Formats:
//   text: one body per line "x y z vx vy vz m [r]", '#' comments (the seeds' format)
//   csv:  header row naming columns (x,y,z,vx,vy,vz,m required; r,id optional)
//   hdf5: GADGET/SWIFT-layout snapshot (nbody/snapshot.hpp, docs/snapshots.md), read by
//         yt and pynbody; written in float64, read from float32 or float64
// Readers validate everything and throw nbody::Error("FILE:LINE: problem") on bad input
// ("FILE: /Group/Dataset problem" for HDF5). Bodies of mass 0 are test particles
// (ParticleSystem::n_active: the bodies with mass), which must come after every body with
// mass; a file in which no body has mass is refused. Text and CSV keep no other record of
// test particles: one with mass (type 0 may have one) is written as any body and reads back
// active (HDF5 keeps it). Writers write to a temporary file in the same folder and rename
// it into place.
#include <filesystem>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "nbody/particles.hpp"

namespace nbody {

enum class FileFormat { Text, Csv, Hdf5 };

/// Format from a name ("text", "csv", "hdf5") or, when name is empty or "auto", from the
/// file's extension (.csv is CSV; .hdf5, .h5 and .hdf are HDF5; anything else is text).
/// Throws on an unknown name.
[[nodiscard]] FileFormat resolve_format(const std::filesystem::path& path, const std::string& name);
[[nodiscard]] std::vector<std::string> format_names();

/// Reads with the given format, except that a file starting with the HDF5 signature is
/// always read as an HDF5 snapshot (GADGET files often carry no .hdf5 extension).
[[nodiscard]] ParticleSystem read_particles(const std::filesystem::path& path, FileFormat format);
void write_particles(const std::filesystem::path& path, const ParticleSystem& ps,
                     FileFormat format);

[[nodiscard]] ParticleSystem read_text(const std::filesystem::path& path);
void write_text(const std::filesystem::path& path, const ParticleSystem& ps);
[[nodiscard]] ParticleSystem read_csv(const std::filesystem::path& path);
void write_csv(const std::filesystem::path& path, const ParticleSystem& ps);

/// Writes what `write` puts on the stream to path atomically: a temporary file beside
/// it, flushed and closed, then renamed over the target, so a crash never leaves a
/// half-written file. Throws nbody::Error naming the path and the system's reason on
/// failure ("out.txt: cannot write file (No space left on device)"); the temporary is then
/// removed. A writer may stop early once the stream is bad: nothing more will be written.
void write_file_atomically(const std::filesystem::path& path,
                           const std::function<void(std::ostream&)>& write);

/// Removes the temporary files of the atomic writes in progress (this one and
/// write_path_atomically's). Async-signal-safe: for a signal handler that ends the process.
void remove_temporaries_in_progress() noexcept;

}  // namespace nbody
