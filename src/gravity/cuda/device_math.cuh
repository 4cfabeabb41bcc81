#pragma once
// The device math policies of the GPU force kernels (direct sum and tree walk): the Math
// argument of nbody::accumulate_pair_acceleration (physics/pair_force.hpp), i.e. how
// 1/sqrt(r2) is computed in float and double, with and without softening. Only .cu files
// include this.
#include <cuda_runtime.h>

namespace nbody::cuda_gravity {

/// rsqrtf() as the bare hardware instruction (MUFU.RSQ, ~2 ulp): the .ftz form. Plain
/// rsqrtf() without -ftz=true adds a denormal-input fix-up (compare, two multiplies,
/// selects) that costs ~30% of the float kernel's issue slots; r2 is never subnormal here
/// (positions are scaled to O(1); a subnormal r2 flushes to 0 and gives 0 or +inf).
__device__ __forceinline__ float rsqrtf_hw(float x) {
  float y;
  asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

/// float: the hardware reciprocal square root, 0 at r2 == 0.
struct MathFloat {
  static __device__ __forceinline__ float safe_rsqrt(float r2) {
    return r2 > 0.0f ? rsqrtf_hw(r2) : 0.0f;
  }
};
/// float with eps2 > 0 (r2 can never be 0).
struct MathFloatSoftened {
  static __device__ __forceinline__ float safe_rsqrt(float r2) { return rsqrtf_hw(r2); }
};
/// double through CUDA's math library rsqrt() (correctly rounded to ~1 ulp).
struct MathDouble {
  static __device__ __forceinline__ double safe_rsqrt(double r2) {
    return r2 > 0.0 ? rsqrt(r2) : 0.0;
  }
};
struct MathDoubleSoftened {
  static __device__ __forceinline__ double safe_rsqrt(double r2) { return rsqrt(r2); }
};

/// double from a float seed (rel. error ~2^-22) and one third-order correction:
/// e = 1 - r2 y^2, y += y e (1/2 + 3/8 e), leaving an error ~e^3 ~ 1e-20, i.e. double
/// rounding. 5 double operations + 2 conversions + MUFU instead of the library's longer
/// sequence. Valid for r2 in float's normal range (the solver scales positions to O(1)).
__device__ __forceinline__ double rsqrt_seeded(double r2) {
  const double y = double(rsqrtf_hw(float(r2)));
  const double h = r2 * y;
  const double e = fma(-h, y, 1.0);
  const double p = fma(0.375, e, 0.5);
  return fma(y * e, p, y);
}
struct MathDoubleSeeded {
  static __device__ __forceinline__ double safe_rsqrt(double r2) {
    return r2 > 0.0 ? rsqrt_seeded(r2) : 0.0;
  }
};
struct MathDoubleSeededSoftened {
  static __device__ __forceinline__ double safe_rsqrt(double r2) { return rsqrt_seeded(r2); }
};

template <class Real, bool Fast, bool Softened>
struct MathFor;
template <bool Fast>
struct MathFor<float, Fast, false> {
  using type = MathFloat;
};
template <bool Fast>
struct MathFor<float, Fast, true> {
  using type = MathFloatSoftened;
};
template <>
struct MathFor<double, false, false> {
  using type = MathDouble;
};
template <>
struct MathFor<double, false, true> {
  using type = MathDoubleSoftened;
};
template <>
struct MathFor<double, true, false> {
  using type = MathDoubleSeeded;
};
template <>
struct MathFor<double, true, true> {
  using type = MathDoubleSeededSoftened;
};

}  // namespace nbody::cuda_gravity
