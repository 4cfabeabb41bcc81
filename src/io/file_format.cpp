// Choosing a particle file format, and reading or writing through the chosen one.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <fstream>

#include "nbody/error.hpp"
#include "nbody/input_error.hpp"
#include "nbody/io.hpp"
#include "nbody/snapshot.hpp"

namespace nbody {

std::vector<std::string> format_names() {
  return {"text", "csv", "hdf5"};
}

FileFormat resolve_format(const std::filesystem::path& path, const std::string& name) {
  if (name == "text") return FileFormat::Text;
  if (name == "csv") return FileFormat::Csv;
  if (name == "hdf5") return FileFormat::Hdf5;
  if (name.empty() || name == "auto") {
    std::string ext = path.extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    // Only .csv and the HDF5 extensions are special: the seed files come with assorted
    // extensions (.txt, .dat, none), and all of them are the text format.
    if (ext == ".csv") return FileFormat::Csv;
    if (ext == ".hdf5" || ext == ".h5" || ext == ".hdf") return FileFormat::Hdf5;
    return FileFormat::Text;
  }
  throw input_error(
      "--format",
      fmt::format("unknown file format (available: {})", fmt::join(format_names(), ", ")), name);
}

bool looks_like_hdf5(const std::filesystem::path& path) {
  // The 8-byte signature at offset 0. A user block moves it to 512, 1024, ...: such a
  // file is still read when its name ends in .hdf5, .h5 or .hdf.
  constexpr std::array<char, 8> kSignature{'\x89', 'H', 'D', 'F', '\r', '\n', '\x1a', '\n'};
  std::array<char, 8> start{};
  std::ifstream in(path, std::ios::binary);
  return in.read(start.data(), start.size()) && start == kSignature;
}

ParticleSystem read_particles(const std::filesystem::path& path, FileFormat format) {
  // Whatever the name says, an HDF5 file is not text: read it as what it is.
  if (format == FileFormat::Hdf5 || looks_like_hdf5(path)) return read_snapshot(path);
  switch (format) {
    case FileFormat::Csv:
      return read_csv(path);
    case FileFormat::Text:
    case FileFormat::Hdf5:
      break;
  }
  return read_text(path);
}

void write_particles(const std::filesystem::path& path, const ParticleSystem& ps,
                     FileFormat format) {
  switch (format) {
    case FileFormat::Csv:
      write_csv(path, ps);
      return;
    case FileFormat::Hdf5:
      write_snapshot(path, ps, SnapshotOptions{.precision = SnapshotPrecision::Double});
      return;
    case FileFormat::Text:
      break;
  }
  write_text(path, ps);
}

}  // namespace nbody
