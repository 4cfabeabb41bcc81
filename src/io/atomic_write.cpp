// Atomic file replacement: write a temporary file beside the target, then rename it
// over the target. rename() within one directory is atomic on POSIX, so readers (and
// a process that dies mid-write) see either the old file or the complete new one.
// There is no fsync: surviving a power cut is not worth its cost on every snapshot.
// write_file_atomically serves stream writers (text, CSV); write_path_atomically serves
// libraries that open the file themselves (HDF5).
//
// The stream writer goes through POSIX write(), not std::ofstream: a stream keeps only a
// failbit when the disk fills, and errno is long overwritten by the time it is looked at,
// which is how "unknown I/O error" reached users. Every failing call records its own errno.
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>
#include <ostream>
#include <streambuf>
#include <string>
#include <system_error>
#include <vector>

#include "io/atomic_target.hpp"
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

// ---- Temporaries in progress, for a signal handler --------------------------------
// A handler that ends the process (nbody gen on Ctrl-C) must remove the temporary being
// written, and may only use async-signal-safe calls: so the names live in fixed buffers,
// published through lock-free atomics, never allocated or freed.

constexpr std::size_t kSlots = 16;  // more concurrent writes just go unregistered
enum SlotState : int { kFree = 0, kFilling = 1, kReady = 2 };
struct Slot {
  std::atomic<int> state{kFree};
  std::array<char, PATH_MAX> path{};
};
std::array<Slot, kSlots> g_slots;

/// Registers tmp for remove_temporaries_in_progress; unregisters when destroyed (after the
/// rename or the removal, so a signal in between only unlinks a name that is gone).
class TemporaryRegistration {
 public:
  explicit TemporaryRegistration(const fs::path& tmp) {
    const std::string& name = tmp.native();
    if (name.size() >= PATH_MAX) return;
    for (Slot& s : g_slots) {
      int expected = kFree;
      if (s.state.compare_exchange_strong(expected, kFilling)) {
        std::memcpy(s.path.data(), name.c_str(), name.size() + 1);
        s.state.store(kReady);
        slot_ = &s;
        return;
      }
    }
  }
  ~TemporaryRegistration() {
    if (slot_ != nullptr) slot_->state.store(kFree);
  }
  TemporaryRegistration(const TemporaryRegistration&) = delete;
  TemporaryRegistration& operator=(const TemporaryRegistration&) = delete;

 private:
  Slot* slot_ = nullptr;
};

// ---- A stream buffer over a file descriptor that keeps the reason of a failure ----

class FdStreamBuf : public std::streambuf {
 public:
  explicit FdStreamBuf(int fd) : fd_(fd), buffer_(kStreamBufferBytes) {
    setp(buffer_.data(), buffer_.data() + buffer_.size());
  }
  /// errno of the first failed write(), or 0.
  [[nodiscard]] int error() const { return error_; }

 protected:
  int_type overflow(int_type ch) override {
    if (!drain()) return traits_type::eof();
    if (!traits_type::eq_int_type(ch, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(ch);
      pbump(1);
    }
    return traits_type::not_eof(ch);
  }

  std::streamsize xsputn(const char* s, std::streamsize n) override {
    const auto count = static_cast<std::size_t>(n);
    if (count < static_cast<std::size_t>(epptr() - pptr())) {
      std::memcpy(pptr(), s, count);
      pbump(static_cast<int>(n));
      return n;
    }
    // Bigger than the room left (the writers hand over 1 MiB chunks): straight through.
    if (!drain() || !write_all(s, count)) return 0;
    return n;
  }

  int sync() override { return drain() ? 0 : -1; }

 private:
  bool drain() {
    const auto pending = static_cast<std::size_t>(pptr() - pbase());
    const bool ok = write_all(pbase(), pending);
    setp(buffer_.data(), buffer_.data() + buffer_.size());
    return ok;
  }

  /// A short write (the disk filled up mid-call) is followed by one that fails with the
  /// reason; EINTR (a signal that only raised a flag) is retried.
  bool write_all(const char* data, std::size_t size) {
    if (error_ != 0) return false;
    while (size > 0) {
      const ssize_t written = ::write(fd_, data, size);
      if (written < 0) {
        if (errno == EINTR) continue;
        error_ = errno != 0 ? errno : EIO;
        return false;
      }
      if (written == 0) {
        error_ = EIO;
        return false;
      }
      data += written;
      size -= static_cast<std::size_t>(written);
    }
    return true;
  }

  int fd_;
  std::vector<char> buffer_;
  int error_ = 0;
};

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

/// True for a target that exists and is neither a regular file nor a directory: a device
/// (/dev/null, /dev/full), a FIFO or a terminal, possibly through a symlink (/dev/stdout).
/// Renaming a temporary over it would replace the device node itself (as root, `-o
/// /dev/null` used to leave a regular file there), and atomicity means nothing for a stream.
bool is_special_file(const fs::path& path) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  return !ec && fs::exists(st) && !fs::is_regular_file(st) && !fs::is_directory(st);
}

/// Where the data goes: through a symlink to an existing file, that file, so the rename
/// replaces it and keeps the link (renaming over the link would turn it into a plain file;
/// with /dev/stdout, as root, it replaced the link in /dev).
fs::path final_target(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_symlink(fs::symlink_status(path, ec)) || !fs::exists(fs::status(path, ec))) {
    return path;
  }
  const fs::path resolved = fs::canonical(path, ec);
  return ec ? path : resolved;
}

/// Writes through the stream and closes fd; throws with the system's reason on failure
/// (after `discard`, which must close nothing: fd is closed here on every path).
void write_through(int fd, const fs::path& path, const std::function<void(std::ostream&)>& write,
                   const std::function<void()>& discard) {
  auto fail = [&](int err) {
    discard();
    throw Error(fmt::format("{}: cannot write file ({})", path.string(), os_reason(err)));
  };
  FdStreamBuf buffer(fd);
  std::ostream out(&buffer);
  try {
    write(out);
  } catch (...) {
    ::close(fd);
    discard();  // the old file must stay as it was: pass the error on
    throw;
  }
  out.flush();
  if (buffer.error() != 0) {
    ::close(fd);
    fail(buffer.error());
  }
  if (!out) {  // a writer that broke the stream without a failed write()
    ::close(fd);
    fail(EIO);
  }
  // close() can report a delayed write error (NFS, quotas): the data is not safe then.
  if (::close(fd) != 0) fail(errno);
}

}  // namespace

void remove_temporaries_in_progress() noexcept {
  for (Slot& s : g_slots) {
    if (s.state.load() == kReady) ::unlink(s.path.data());
  }
}

void write_file_atomically(const fs::path& path, const std::function<void(std::ostream&)>& write) {
  const fs::path target = final_target(path);
  const fs::path dir = existing_parent(target);
  if (is_special_file(target)) {
    const int fd = ::open(target.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
      throw Error(fmt::format("{}: cannot write file ({})", path.string(), os_reason(errno)));
    }
    write_through(fd, path, write, [] {});
    return;
  }
  const fs::path tmp = temporary_beside(dir, target);
  const TemporaryRegistration registration(tmp);

  // 0666 less the umask, as std::ofstream created files; O_EXCL because the name is ours.
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) {
    throw Error(fmt::format("{}: cannot write file (cannot create temporary file '{}': {})",
                            path.string(), tmp.string(), os_reason(errno)));
  }
  // Every way out before the rename removes the temporary.
  write_through(fd, path, write, [&] {
    std::error_code ignored;
    fs::remove(tmp, ignored);
  });
  if (const std::string reason = replace_target(tmp, target); !reason.empty()) {
    throw Error(fmt::format("{}: cannot write file ({})", path.string(), reason));
  }
}

struct AtomicTarget::State {
  fs::path path, target, tmp;
  TemporaryRegistration registration;
  bool committed = false;
  State(const fs::path& p, fs::path t, fs::path temporary)
      : path(p), target(std::move(t)), tmp(std::move(temporary)), registration(tmp) {}
};

AtomicTarget::AtomicTarget(const fs::path& path) {
  fs::path target = final_target(path);
  const fs::path dir = existing_parent(target);
  if (is_special_file(target)) {
    // The libraries behind this (HDF5) seek in their file: a device or a pipe cannot be one.
    throw Error(fmt::format("{}: cannot write file (not a regular file; this format needs one)",
                            path.string()));
  }
  fs::path tmp = temporary_beside(dir, target);
  state_ = std::make_unique<State>(path, std::move(target), std::move(tmp));
}

AtomicTarget::~AtomicTarget() {
  if (state_ && !state_->committed) {
    std::error_code ignored;
    fs::remove(state_->tmp, ignored);  // the old file stays as it was
  }
}

const fs::path& AtomicTarget::temporary() const {
  return state_->tmp;
}

void AtomicTarget::commit() {
  State& s = *state_;
  std::error_code ignored;
  if (!fs::is_regular_file(s.tmp, ignored)) {
    throw Error(fmt::format("{}: cannot write file (the writer created no file)", s.path.string()));
  }
  s.committed = true;  // replace_target removes the temporary when it fails
  if (const std::string reason = replace_target(s.tmp, s.target); !reason.empty()) {
    throw Error(fmt::format("{}: cannot write file ({})", s.path.string(), reason));
  }
}

void write_path_atomically(const fs::path& path,
                           const std::function<void(const fs::path& tmp)>& write) {
  AtomicTarget target(path);
  write(target.temporary());  // throws: the destructor removes the temporary
  target.commit();
}

}  // namespace nbody
