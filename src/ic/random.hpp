#pragma once
// Seeded random numbers for the initial-condition generators.
//
// Why not std::uniform_real_distribution / std::normal_distribution: the standard fixes
// the engines' output bit for bit but leaves the distributions' algorithms to each
// library, so libstdc++, libc++ and MSVC give different numbers for the same seed. We
// only take raw 64-bit words from std::mt19937_64 (fully specified by the standard) and
// turn them into doubles ourselves, so a seed means the same bodies everywhere.
#include <cstdint>
#include <random>

namespace nbody::ic {

class Random {
 public:
  explicit Random(std::uint64_t seed) : engine_(seed) {}

  /// The raw 64-bit word (the top 53 bits of it feed the doubles below).
  std::uint64_t next_u64() { return engine_(); }

  /// Uniform in [0, 1): the top 53 bits scaled by 2^-53, so every value is an exact
  /// multiple of 2^-53 and 1 is never returned.
  double uniform();
  /// Uniform in (0, 1): (k + 1/2) 2^-53, for callers that take a log or a negative
  /// power and must never see 0 (or 1).
  double uniform_open();
  /// Uniform in [lo, hi).
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  /// Standard normal N(0, 1) by the Box-Muller transform; the second value of each
  /// pair is kept for the next call (so calls come in pairs of draws).
  double normal();

 private:
  std::mt19937_64 engine_;
  double spare_ = 0;
  bool has_spare_ = false;
};

}  // namespace nbody::ic
