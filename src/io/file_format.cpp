// Choosing a particle file format, and reading or writing through the chosen one.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "nbody/error.hpp"
#include "nbody/io.hpp"

namespace nbody {

std::vector<std::string> format_names() {
  return {"text", "csv"};
}

FileFormat resolve_format(const std::filesystem::path& path, const std::string& name) {
  if (name == "text") return FileFormat::Text;
  if (name == "csv") return FileFormat::Csv;
  if (name.empty() || name == "auto") {
    std::string ext = path.extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    // Only .csv is special: the seed files come with assorted extensions (.txt, .dat,
    // none), and all of them are the text format.
    return ext == ".csv" ? FileFormat::Csv : FileFormat::Text;
  }
  throw Error(fmt::format("--format {}: unknown file format (available: {})", name,
                          fmt::join(format_names(), ", ")));
}

ParticleSystem read_particles(const std::filesystem::path& path, FileFormat format) {
  switch (format) {
    case FileFormat::Csv:
      return read_csv(path);
    case FileFormat::Text:
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
    case FileFormat::Text:
      break;
  }
  write_text(path, ps);
}

}  // namespace nbody
