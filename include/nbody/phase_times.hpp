#pragma once
// Wall-clock seconds per named phase of a run (gravity, integrate, io, ...), in the
// order phases first appear. Solvers report their own stages the same way (the trees'
// build and walk, the GPU tree's bbox, sort, build, summarise, force).
#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace nbody {

class PhaseTimes {
 public:
  void add(const std::string& phase, double seconds) {
    for (auto& [name, total] : entries_) {
      if (name == phase) {
        total += seconds;
        return;
      }
    }
    entries_.emplace_back(phase, seconds);
  }
  [[nodiscard]] double get(const std::string& phase) const {
    for (const auto& [name, total] : entries_)
      if (name == phase) return total;
    return 0.0;
  }
  [[nodiscard]] double total() const {
    double t = 0;
    for (const auto& e : entries_) t += e.second;
    return t;
  }
  /// Every phase forgotten (the room kept).
  void clear() { entries_.clear(); }
  [[nodiscard]] const std::vector<std::pair<std::string, double>>& entries() const {
    return entries_;
  }

 private:
  std::vector<std::pair<std::string, double>> entries_;
};

/// Adds the time from construction to destruction to one phase.
class ScopedPhase {
 public:
  ScopedPhase(PhaseTimes& times, std::string phase)
      : times_(times), phase_(std::move(phase)), start_(std::chrono::steady_clock::now()) {}
  ~ScopedPhase() {
    times_.add(phase_,
               std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
  }
  ScopedPhase(const ScopedPhase&) = delete;
  ScopedPhase& operator=(const ScopedPhase&) = delete;

 private:
  PhaseTimes& times_;
  std::string phase_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace nbody
