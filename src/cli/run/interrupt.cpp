#include "cli/run/interrupt.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <csignal>
#include <cstring>

#include "nbody/io.hpp"

namespace nbody::cli {

namespace {

volatile std::sig_atomic_t g_signal = 0;
struct sigaction g_old_int {};
struct sigaction g_old_term {};

extern "C" void on_signal(int sig) {
  if (g_signal != 0) {
    // The second one: give up at once, but leave no hidden temporary behind.
    remove_temporaries_in_progress();
    std::signal(sig, SIG_DFL);
    std::raise(sig);  // delivered when the handler returns
    return;
  }
  g_signal = sig;
}

void install(void (*handler)(int)) {
  struct sigaction action {};
  action.sa_handler = handler;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;  // no SA_RESTART needed: the loop does no blocking reads
  sigaction(SIGINT, &action, &g_old_int);
  sigaction(SIGTERM, &action, &g_old_term);
}

void restore() {
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
}

// ExitOnInterrupt's message, filled before the handler is installed: the handler may only
// use async-signal-safe calls (write, unlink, _exit), so nothing is formatted there.
std::array<char, 1024> g_what{};
std::size_t g_what_size = 0;

void write_stderr(const char* text, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(STDERR_FILENO, text, size);
    if (n <= 0) return;  // nothing better to do in a handler
    text += n;
    size -= static_cast<std::size_t>(n);
  }
}

void write_stderr(const char* text) {
  write_stderr(text, std::strlen(text));
}

extern "C" void exit_on_signal(int sig) {
  remove_temporaries_in_progress();
  write_stderr("\nnbody: interrupted by ");
  write_stderr(signal_name(sig));
  write_stderr(": ");
  write_stderr(g_what.data(), g_what_size);
  write_stderr("\n");
  ::_exit(128 + sig);  // _exit: no atexit handlers (libhdf5's would close a removed file)
}

}  // namespace

InterruptGuard::InterruptGuard() {
  g_signal = 0;
  install(on_signal);
}

InterruptGuard::~InterruptGuard() {
  restore();
}

int InterruptGuard::pending() {
  return g_signal;
}

ExitOnInterrupt::ExitOnInterrupt(std::string_view what) {
  g_what_size = std::min(what.size(), g_what.size());
  std::memcpy(g_what.data(), what.data(), g_what_size);
  install(exit_on_signal);
}

ExitOnInterrupt::~ExitOnInterrupt() {
  restore();
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
