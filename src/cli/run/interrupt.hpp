#pragma once
// SIGINT and SIGTERM during `nbody run`: the first one only raises a flag, which the step
// loop reads between steps to write a checkpoint and exit cleanly; a second one (an
// impatient Ctrl-C) takes the default action at once. Every file is written atomically,
// so that is safe too: it just loses the steps since the last checkpoint.
namespace nbody::cli {

class InterruptGuard {
 public:
  InterruptGuard();   // installs the handlers
  ~InterruptGuard();  // restores the previous ones
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

  /// The signal that arrived (SIGINT or SIGTERM), or 0.
  [[nodiscard]] static int pending();
};

/// "SIGINT", "SIGTERM" or "signal N".
[[nodiscard]] const char* signal_name(int sig);

}  // namespace nbody::cli
