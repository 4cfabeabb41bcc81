#pragma once
// NBODY_IO_TRACE=1: the writing of a large file says on stderr, per rank, how long each of its
// parts took (the state's download, the checks, the layout, the rows, the agreement, the
// rename): where a 2^30-body snapshot's time goes on a machine we cannot profile
// (docs/snapshots.md, "Large files").
#include <chrono>
#include <string>

namespace nbody::io_detail {

/// NBODY_IO_TRACE from its text (null: unset): 0 or 1; throws the input error that names the
/// variable otherwise.
bool io_trace_from(const char* text);
/// io_trace_from(getenv("NBODY_IO_TRACE")), read once; `nbody run` asks it at its start, so
/// a bad value stops every rank there, not inside a file's collectives.
bool io_trace_on();

class IoTrace {
 public:
  /// `what`: the line's start ("rank 1 snapshot_0002.hdf5").
  explicit IoTrace(std::string what) : on_(io_trace_on()), line_(std::move(what)) {}
  IoTrace(const IoTrace&) = delete;
  IoTrace& operator=(const IoTrace&) = delete;
  /// The time since the last mark (or the start), named `part`.
  void mark(const char* part);
  ~IoTrace();

 private:
  using Clock = std::chrono::steady_clock;
  bool on_;
  std::string line_;
  Clock::time_point last_ = Clock::now();
};

}  // namespace nbody::io_detail
