#pragma once
// Seeded random numbers for the initial-condition generators: one stream per body, so the
// bodies can be drawn in parallel, in any order, by any number of threads, and still be the
// same bodies.
//
// The generator is Philox4x32-10 (Salmon, Moraes, Dror & Shaw 2011, "Parallel random
// numbers: as easy as 1, 2, 3", SC'11; the Random123 library), a counter-based generator:
// ten rounds of a keyed bijection of a 128-bit counter, with no state but the counter.
//   key     = (seed low 32 bits, seed high 32 bits)
//   counter = (block low, block high, stream low, stream high)
// where `stream` is the body's index and `block` counts the 128-bit outputs that body has
// used (0, 1, 2, ...). Each block gives two 64-bit words, out0 | out1 << 32 first, then
// out2 | out3 << 32. So word k of body i is a fixed function of (seed, i, k), and two
// bodies never share a word of input: their counters differ. The known-answer vectors of
// Random123 (tests/kat_vectors) pin philox4x32_10() in the unit tests.
//
// Why not std::uniform_real_distribution / std::normal_distribution: the standard leaves
// the distributions' algorithms to each library, so libstdc++, libc++ and MSVC give
// different numbers for the same seed. Philox is plain 32-bit integer arithmetic, and we
// turn its words into doubles ourselves (exactly, see uniform()), so a seed means the same
// bodies on every platform (up to the libm functions a model calls: log, sin, cos, pow).
#include <array>
#include <cstdint>

namespace nbody::ic {

using PhiloxBlock = std::array<std::uint32_t, 4>;
using PhiloxKey = std::array<std::uint32_t, 2>;

/// Philox4x32 with 10 rounds, as in Random123's philox4x32_R(10, counter, key).
[[nodiscard]] constexpr PhiloxBlock philox4x32_10(PhiloxBlock c, PhiloxKey k) {
  constexpr std::uint64_t kM0 = 0xD2511F53, kM1 = 0xCD9E8D57;  // round multipliers
  constexpr std::uint32_t kW0 = 0x9E3779B9, kW1 = 0xBB67AE85;  // key schedule (Weyl)
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k[0] += kW0;
      k[1] += kW1;
    }
    const std::uint64_t p0 = kM0 * c[0];
    const std::uint64_t p1 = kM1 * c[2];
    c = {static_cast<std::uint32_t>(p1 >> 32) ^ c[1] ^ k[0], static_cast<std::uint32_t>(p1),
         static_cast<std::uint32_t>(p0 >> 32) ^ c[3] ^ k[1], static_cast<std::uint32_t>(p0)};
  }
  return c;
}

/// Body `stream`'s random numbers for `seed` (see the top of this file).
class Random {
 public:
  Random(std::uint64_t seed, std::uint64_t stream)
      : key_{low(seed), high(seed)}, stream_{low(stream), high(stream)} {}

  /// The next raw 64-bit word (the top 53 bits of it feed the doubles below).
  std::uint64_t next_u64() {
    if (has_word_) {
      has_word_ = false;
      return word_;
    }
    const PhiloxBlock out =
        philox4x32_10({low(block_), high(block_), stream_[0], stream_[1]}, key_);
    ++block_;
    word_ = out[2] | std::uint64_t{out[3]} << 32;
    has_word_ = true;
    return out[0] | std::uint64_t{out[1]} << 32;
  }

  /// Uniform in [0, 1): the top 53 bits scaled by 2^-53, so every value is an exact
  /// multiple of 2^-53 and 1 is never returned.
  double uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }
  /// Uniform in (0, 1): (k + 1/2) 2^-53, for callers that take a log or a negative
  /// power and must never see 0 (or 1).
  double uniform_open() { return (static_cast<double>(next_u64() >> 11) + 0.5) * 0x1.0p-53; }
  /// Uniform in [lo, hi).
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  /// Standard normal N(0, 1) by the Box-Muller transform; the second value of each
  /// pair is kept for the next call (so calls come in pairs of draws).
  double normal();

 private:
  static constexpr std::uint32_t low(std::uint64_t v) { return static_cast<std::uint32_t>(v); }
  static constexpr std::uint32_t high(std::uint64_t v) {
    return static_cast<std::uint32_t>(v >> 32);
  }

  PhiloxKey key_;
  std::array<std::uint32_t, 2> stream_;
  std::uint64_t block_ = 0;
  std::uint64_t word_ = 0;  // the second word of the last block, not yet used
  bool has_word_ = false;
  double spare_ = 0;
  bool has_spare_ = false;
};

}  // namespace nbody::ic
