#pragma once
// The fuzz targets hand libFuzzer's bytes to nbody's readers, which take a path: each input
// is written to one file per process and target (in /dev/shm when there is one, so no disk
// is touched), overwritten by the next input and removed when the process ends.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

namespace nbody::fuzz {

class InputFile {
 public:
  /// name: the target's name; extension: what the readers would expect (".hdf5", ".csv").
  InputFile(const std::string& name, const std::string& extension) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const char* tmp = std::getenv("TMPDIR");
    fs::path dir = tmp != nullptr && *tmp != '\0' ? fs::path(tmp) : fs::path("/tmp");
    if (!tmp && fs::is_directory("/dev/shm", ec)) dir = "/dev/shm";
    path_ = dir / ("nbody-fuzz-" + name + "-" + std::to_string(::getpid()) + extension);
  }
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  ~InputFile() {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }

  /// Writes the input; a failure here is the machine's, not the reader's: abort loudly.
  const std::filesystem::path& write(const std::uint8_t* data, std::size_t size) {
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    out.close();
    if (!out) std::abort();
    return path_;
  }

  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace nbody::fuzz
