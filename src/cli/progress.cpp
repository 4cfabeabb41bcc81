#include "cli/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace nbody::cli {

namespace {
std::string format_duration(double s) {
  if (s < 60) return fmt::format("{:.0f}s", s);
  if (s < 3600) return fmt::format("{:.0f}m{:02.0f}s", std::floor(s / 60), std::fmod(s, 60));
  return fmt::format("{:.0f}h{:02.0f}m", std::floor(s / 3600), std::fmod(s / 60, 60));
}
}  // namespace

ProgressLine::ProgressLine(std::FILE* out, std::uint64_t total_steps, bool enabled,
                           std::uint64_t first_step)
    : out_(out),
      total_(total_steps),
      first_(first_step),
      enabled_(enabled),
      tty_(isatty(fileno(out)) != 0),
      start_(Clock::now()),
      last_print_(start_),
      last_drift_(start_),
      last_read_(start_) {}

bool ProgressLine::clock_due() {
  if (!enabled_ || ++calls_ < stride_) return false;
  calls_ = 0;
  return true;
}

bool ProgressLine::line_due(Clock::time_point now) const {
  if (!enabled_) return false;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  // A terminal gets a line rewritten twice a second; a log file one line every 10 s.
  const double interval = tty_ ? 0.5 : 10.0;
  return elapsed >= 2.0 && std::chrono::duration<double>(now - last_print_).count() >= interval;
}

bool ProgressLine::drift_due(Clock::time_point now) const {
  // An exact or tree energy costs many steps: recompute it only when that costs under
  // ~2.5% of the time (the planned energies take up to 7.5%: energy_choice.hpp).
  const double since_drift = std::chrono::duration<double>(now - last_drift_).count();
  return since_drift > 40 * drift_cost_;
}

bool ProgressLine::wants_energy() {
  // Asked before the step whose update() may print: the same stride, one call ahead.
  if (!enabled_ || calls_ + 1 < stride_) return false;
  const auto now = Clock::now();
  return line_due(now) && drift_due(now);
}

void ProgressLine::update(std::uint64_t step, double sim_time,
                          const std::function<double()>& energy_drift) {
  if (!clock_due()) return;
  const auto now = Clock::now();
  const double since = std::chrono::duration<double>(now - last_read_).count();
  last_read_ = now;
  if (since < 1e-3 && stride_ < (std::uint64_t(1) << 20)) stride_ *= 2;
  if (since > 20e-3 && stride_ > 1) stride_ /= 2;
  if (!line_due(now)) return;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  if (energy_drift && drift_due(now)) {
    const auto t0 = Clock::now();
    drift_ = energy_drift();
    last_drift_ = Clock::now();
    drift_cost_ = std::chrono::duration<double>(last_drift_ - t0).count();
  }
  const double rate = double(step - first_) / elapsed;
  std::string line;
  if (t_end_ > t_start_) {
    const double done = std::clamp((sim_time - t_start_) / (t_end_ - t_start_), 0.0, 1.0);
    const double eta = done > 0 ? elapsed * (1 - done) / done : 0.0;
    line = fmt::format("step {}  t = {:.6g}/{:.6g} ({:.1f}%)  {:.3g} steps/s  ETA {}", step,
                       sim_time, t_end_, 100 * done, rate, format_duration(eta));
  } else {
    const double eta = rate > 0 && total_ > step ? double(total_ - step) / rate : 0.0;
    // The count is checked before the run (integrator.hpp, the length of a run); the share
    // is capped all the same, so a last step more than counted never shows "679.1%".
    const double done = std::min(1.0, double(step) / double(total_ ? total_ : 1));
    line = fmt::format("step {}/{} ({:.1f}%)  t = {:.6g}  {:.3g} steps/s  ETA {}", step, total_,
                       100.0 * done, sim_time, rate, format_duration(eta));
  }
  if (drift_ >= 0) line += fmt::format("  |dE/E| = {:.3e}", drift_);
  if (tty_) {
    fmt::print(out_, "\r{:<100}", line);
  } else {
    fmt::print(out_, "{}\n", line);
  }
  std::fflush(out_);
  shown_ = true;
  last_print_ = Clock::now();
}

void ProgressLine::finish() {
  if (shown_ && tty_) fmt::print(out_, "\n");
  shown_ = false;
}

void print_timing_table(std::FILE* out, const PhaseTimes& times, std::uint64_t steps) {
  const double total = times.total();
  fmt::print(out, "{:<12} {:>10} {:>12} {:>7}\n", "phase", "seconds", "ms/step", "share");
  for (const auto& [name, seconds] : times.entries()) {
    fmt::print(out, "{:<12} {:>10.3f} {:>12.4f} {:>6.1f}%\n", name, seconds,
               steps ? 1e3 * seconds / double(steps) : 0.0,
               total > 0 ? 100 * seconds / total : 0.0);
  }
  fmt::print(out, "{:<12} {:>10.3f} {:>12.4f} {:>6.1f}%\n", "total", total,
             steps ? 1e3 * total / double(steps) : 0.0, 100.0);
}

}  // namespace nbody::cli
