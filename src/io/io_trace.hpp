#pragma once
// NBODY_IO_TRACE: with it set, the writing of a large file says on stderr, per rank, how long
// each of its parts took (the state's download, the checks, the layout, the rows, the
// agreement, the rename): where a 2^30-body snapshot's time goes on a machine we cannot
// profile (docs/snapshots.md, "Large files").
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace nbody::io_detail {

class IoTrace {
 public:
  /// `what`: the line's start ("rank 1 snapshot_0002.hdf5 rows").
  explicit IoTrace(std::string what)
      : on_(std::getenv("NBODY_IO_TRACE") != nullptr), line_(std::move(what)) {}
  IoTrace(const IoTrace&) = delete;
  IoTrace& operator=(const IoTrace&) = delete;
  /// The time since the last mark (or the start), named `part`.
  void mark(const char* part) {
    if (!on_) return;
    const auto now = Clock::now();
    line_ += fmt::format(" {} {:.2f} s", part, std::chrono::duration<double>(now - last_).count());
    last_ = now;
  }
  ~IoTrace() {
    if (on_) std::fprintf(stderr, "io trace: %s\n", line_.c_str());
  }

 private:
  using Clock = std::chrono::steady_clock;
  bool on_;
  std::string line_;
  Clock::time_point last_ = Clock::now();
};

}  // namespace nbody::io_detail
