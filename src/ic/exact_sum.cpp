// ExactSum::value (exact_sum.hpp): the long accumulator's integer rounded once to a double.
#include "ic/exact_sum.hpp"

#include <cmath>
#include <limits>

namespace nbody::ic {

double ExactSum::value() const {
  if (!finite_) return std::numeric_limits<double>::quiet_NaN();
  ExactSum s = *this;
  s.carry();
  int top = kLimbs - 1;
  while (top >= 0 && s.limb_[top] == 0) --top;
  if (top < 0) return 0.0;
  // The magnitude, every limb in [0, 2^32) (a negative sum negated and carried again).
  const bool negative = s.limb_[top] < 0;
  if (negative) {
    for (auto& l : s.limb_) l = -l;
    s.carry();
    while (top > 0 && s.limb_[top] == 0) --top;
  }
  // The top 128 bits (limbs top .. top - 3) and whether anything below them is set.
  Uint128 high = 0;
  for (int k = top; k >= top - 3; --k) {
    high = (high << kBits) | (k >= 0 ? static_cast<Uint128>(s.limb_[k]) : 0u);
  }
  bool sticky = false;
  for (int k = top - 4; k >= 0; --k) sticky = sticky || s.limb_[k] != 0;
  int exponent = kBits * (top - 3) - 1074;  // high x 2^exponent (+ the sticky part)
  int bits = 0;
  for (Uint128 t = high; t != 0; t >>= 1) ++bits;
  std::uint64_t mantissa = 0;
  if (bits <= 53) {
    mantissa = std::uint64_t(high);  // exact (nothing below: sticky is false when bits < 97)
  } else {
    const int shift = bits - 53;
    mantissa = std::uint64_t(high >> shift);
    const Uint128 rest = high & ((static_cast<Uint128>(1) << shift) - 1);
    const Uint128 half = static_cast<Uint128>(1) << (shift - 1);
    if (rest > half || (rest == half && (sticky || (mantissa & 1u)))) ++mantissa;
    exponent += shift;
    if (mantissa == (std::uint64_t{1} << 53)) mantissa >>= 1, ++exponent;
  }
  const double magnitude = std::ldexp(double(mantissa), exponent);
  return negative ? -magnitude : magnitude;
}

std::vector<std::int64_t> ExactSum::words() const {
  ExactSum s = *this;
  s.carry();
  std::vector<std::int64_t> w(s.limb_.begin(), s.limb_.end());
  w.push_back(s.finite_ ? 1 : 0);
  return w;
}

ExactSum ExactSum::from_words(const std::int64_t* words) {
  ExactSum s;
  for (int k = 0; k < kLimbs; ++k) s.limb_[std::size_t(k)] = words[k];
  s.finite_ = words[kLimbs] != 0;
  return s;
}

}  // namespace nbody::ic
