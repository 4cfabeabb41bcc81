#pragma once
// Exact sums of doubles (Kulisch's long accumulator), for the sums the initial conditions
// take over all bodies (their centre of mass): every finite double is an integer multiple
// of 2^-1074 below 2^1024, so 2098 bits and some room for carries hold any sum of them
// exactly, and the result is that exact value rounded once. So the sum has the same bits
// whatever the order of the terms and however they are split between threads and between
// the ranks that each draw a window of the bodies (generate_window: the same bodies for any
// number of ranks).
#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

namespace nbody::ic {

/// 128-bit unsigned arithmetic (GCC and Clang; __extension__: not ISO C++, said once here).
__extension__ typedef unsigned __int128 Uint128;

class ExactSum {
 public:
  void add(double x) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, &x, sizeof bits);
    const int biased = int((bits >> 52) & 0x7ff);
    const std::uint64_t fraction = bits & ((std::uint64_t{1} << 52) - 1);
    if (biased == 0x7ff) {  // inf or NaN: the sum is not a number
      finite_ = false;
      return;
    }
    if (biased == 0 && fraction == 0) return;
    // x = +-mantissa * 2^(at - 1074): subnormals have at = 0, normal numbers biased - 1.
    const std::uint64_t mantissa = biased == 0 ? fraction : fraction | (std::uint64_t{1} << 52);
    const int at = biased == 0 ? 0 : biased - 1;
    const Uint128 v = static_cast<Uint128>(mantissa) << (at % kBits);
    const std::int64_t sign = bits >> 63 ? -1 : 1;
    const int k = at / kBits;
    limb_[k] += sign * std::int64_t(std::uint64_t(v) & kMask);
    limb_[k + 1] += sign * std::int64_t(std::uint64_t(v >> 32) & kMask);
    limb_[k + 2] += sign * std::int64_t(std::uint64_t(v >> 64));
    if (++adds_ == kAddsBeforeCarry) carry();
  }

  void add(const ExactSum& other) {
    ExactSum o = other;
    o.carry();
    carry();
    for (int k = 0; k < kLimbs; ++k) limb_[k] += o.limb_[k];
    finite_ = finite_ && o.finite_;
    carry();
  }

  /// The exact sum rounded to the nearest double (ties to even; inf past the largest
  /// double; results below 2^-1022 may be rounded twice).
  [[nodiscard]] double value() const;

  /// The state as words (for an all-gather between ranks), and back.
  [[nodiscard]] std::vector<std::int64_t> words() const;
  static ExactSum from_words(const std::int64_t* words);
  static constexpr int kWords = 71;  // kLimbs and the finite flag

 private:
  static constexpr int kBits = 32;
  static constexpr std::uint64_t kMask = 0xffffffffu;
  static constexpr int kLimbs = 70;  // 2240 bits: 2098 and the carries of 2^30 terms
  static constexpr std::uint32_t kAddsBeforeCarry = 1u << 30;  // |limb| < 2^62 between carries

  /// Every limb but the highest into [0, 2^32), the sign in the highest.
  void carry() {
    for (int k = 0; k + 1 < kLimbs; ++k) {
      const std::int64_t c = limb_[k] >> kBits;  // floor division, negatives too
      limb_[k] -= c * (std::int64_t{1} << kBits);
      limb_[k + 1] += c;
    }
    adds_ = 0;
  }

  std::array<std::int64_t, kLimbs> limb_{};  // the sum is sum_k limb_[k] 2^(32k - 1074)
  std::uint32_t adds_ = 0;
  bool finite_ = true;
};

}  // namespace nbody::ic
