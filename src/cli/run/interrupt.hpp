#pragma once
// SIGINT and SIGTERM during `nbody run`: the first one only raises a flag, which the step
// loop reads between steps to write a checkpoint and exit cleanly; a second one (an
// impatient Ctrl-C) removes the temporary of a write in progress and takes the default
// action at once. Every file is written atomically, so that is safe too: it just loses the
// steps since the last checkpoint.
//
// Commands with no loop to stop between steps (`nbody gen`) use ExitOnInterrupt instead.
#include <string_view>

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

/// While it lives, SIGINT or SIGTERM ends the process at once, from the handler: the
/// temporaries of the atomic writes in progress are removed (so the old file, if any, stays
/// as it was and no hidden file is left), "nbody: interrupted by SIGINT: WHAT" is printed,
/// and the exit status is 128 + the signal (130 for Ctrl-C, as shells report it). For work
/// that cannot stop at a safe point of its own: generating and writing one file.
class ExitOnInterrupt {
 public:
  /// what: the consequence, e.g. "big.txt was not written" (cut to 1 kB).
  explicit ExitOnInterrupt(std::string_view what);
  ~ExitOnInterrupt();  // restores the previous handlers
  ExitOnInterrupt(const ExitOnInterrupt&) = delete;
  ExitOnInterrupt& operator=(const ExitOnInterrupt&) = delete;
};

/// "SIGINT", "SIGTERM" or "a signal".
[[nodiscard]] const char* signal_name(int sig);

}  // namespace nbody::cli
