// Atomic file replacement: write a temporary file beside the target, then rename it
// over the target. rename() within one directory is atomic on POSIX, so readers (and
// a process that dies mid-write) see either the old file or the complete new one.
// There is no fsync: surviving a power cut is not worth its cost on every snapshot.
// write_file_atomically serves stream writers (text, CSV); write_path_atomically serves
// libraries that open the file themselves (HDF5).
#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

#include "nbody/error.hpp"
#include "nbody/io.hpp"
#include "nbody/snapshot.hpp"

namespace nbody {

namespace {

namespace fs = std::filesystem;

// Large enough that writing millions of bodies costs few system calls.
constexpr std::size_t kStreamBufferBytes = std::size_t{1} << 20;

std::string os_reason(int err) {
  return err != 0 ? std::strerror(err) : "unknown I/O error";
}

/// A name no other writer uses at the same time: the process id keeps separate
/// processes apart, the counter separate writes (and threads) within one.
fs::path temporary_beside(const fs::path& dir, const fs::path& target) {
  static std::atomic<unsigned long> counter{0};
  return dir / fmt::format(".{}.tmp-{}-{}", target.filename().string(),
                           static_cast<long>(::getpid()), counter.fetch_add(1));
}

/// The target's folder must already exist: creating it could hide a mistyped path.
fs::path existing_parent(const fs::path& path) {
  const std::string target = path.string();
  if (!path.has_filename()) {
    throw Error(fmt::format("{}: cannot write file (the path names a directory)", target));
  }
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::error_code ec;
  const fs::file_status st = fs::status(dir, ec);
  if (fs::is_directory(st)) return dir;
  if (!fs::exists(st)) {
    throw Error(
        fmt::format("{}: cannot write file (directory '{}' does not exist)", target, dir.string()));
  }
  throw Error(fmt::format("{}: cannot write file ('{}' is not a directory)", target, dir.string()));
}

/// The last step of both writers: the complete temporary replaces the target. Returns
/// the reason on failure (tmp is then removed), an empty string on success.
std::string replace_target(const fs::path& tmp, const fs::path& path) {
  // Keep the old file's permissions, not the temporary's umask defaults.
  std::error_code ignored;
  const fs::file_status old = fs::status(path, ignored);
  if (fs::is_regular_file(old)) fs::permissions(tmp, old.permissions(), ignored);

  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (!ec) return {};
  fs::remove(tmp, ignored);
  return ec.message();
}

}  // namespace

void write_file_atomically(const fs::path& path, const std::function<void(std::ostream&)>& write) {
  const fs::path dir = existing_parent(path);
  const fs::path tmp = temporary_beside(dir, path);
  std::error_code ignored;
  auto fail = [&](const std::string& reason) {
    fs::remove(tmp, ignored);
    throw Error(fmt::format("{}: cannot write file ({})", path.string(), reason));
  };

  std::vector<char> buffer(kStreamBufferBytes);
  std::ofstream out;
  out.rdbuf()->pubsetbuf(buffer.data(), static_cast<std::streamsize>(buffer.size()));
  errno = 0;
  out.open(tmp, std::ios::binary | std::ios::trunc);
  if (!out) {
    fail(fmt::format("cannot create temporary file '{}': {}", tmp.string(), os_reason(errno)));
  }

  try {
    write(out);
  } catch (...) {
    // The old file must stay as it was: drop the partial temporary and pass the error on.
    out.close();
    fs::remove(tmp, ignored);
    throw;
  }
  // The stream hides write errors (disk full) in its state: check it after writing and
  // again after close, which flushes the last buffer.
  errno = 0;
  out.flush();
  if (!out) fail(os_reason(errno));
  out.close();
  if (out.fail()) fail(os_reason(errno));

  if (const std::string reason = replace_target(tmp, path); !reason.empty()) fail(reason);
}

void write_path_atomically(const fs::path& path,
                           const std::function<void(const fs::path& tmp)>& write) {
  const fs::path dir = existing_parent(path);
  const fs::path tmp = temporary_beside(dir, path);
  std::error_code ignored;
  try {
    write(tmp);
  } catch (...) {
    fs::remove(tmp, ignored);  // the old file stays as it was
    throw;
  }
  if (!fs::is_regular_file(tmp, ignored)) {
    throw Error(fmt::format("{}: cannot write file (the writer created no file)", path.string()));
  }
  if (const std::string reason = replace_target(tmp, path); !reason.empty()) {
    throw Error(fmt::format("{}: cannot write file ({})", path.string(), reason));
  }
}

}  // namespace nbody
