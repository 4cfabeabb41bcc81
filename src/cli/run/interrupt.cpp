#include "cli/run/interrupt.hpp"

#include <csignal>

namespace nbody::cli {

namespace {

volatile std::sig_atomic_t g_signal = 0;
struct sigaction g_old_int {};
struct sigaction g_old_term {};

extern "C" void on_signal(int sig) {
  g_signal = sig;
  // The next one is not caught: a second Ctrl-C ends the process at once.
  std::signal(sig, SIG_DFL);
}

}  // namespace

InterruptGuard::InterruptGuard() {
  g_signal = 0;
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;  // no SA_RESTART needed: the loop does no blocking reads
  sigaction(SIGINT, &action, &g_old_int);
  sigaction(SIGTERM, &action, &g_old_term);
}

InterruptGuard::~InterruptGuard() {
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
}

int InterruptGuard::pending() {
  return g_signal;
}

const char* signal_name(int sig) {
  switch (sig) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    default:
      return "a signal";
  }
}

}  // namespace nbody::cli
