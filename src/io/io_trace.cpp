// IoTrace and NBODY_IO_TRACE (io_trace.hpp).
#include "io/io_trace.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>

#include "core/environment_value.hpp"

namespace nbody::io_detail {

bool io_trace_from(const char* text) {
  return whole_from_environment("NBODY_IO_TRACE", text, 0, 1, "must be 0 or 1") == 1;
}

bool io_trace_on() {
  static const bool on = io_trace_from(std::getenv("NBODY_IO_TRACE"));
  return on;
}

void IoTrace::mark(const char* part) {
  if (!on_) return;
  const auto now = Clock::now();
  line_ += fmt::format(" {} {:.2f} s", part, std::chrono::duration<double>(now - last_).count());
  last_ = now;
}

IoTrace::~IoTrace() {
  if (on_) std::fprintf(stderr, "io trace: %s\n", line_.c_str());
}

}  // namespace nbody::io_detail
