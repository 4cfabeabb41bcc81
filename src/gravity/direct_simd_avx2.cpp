// The fast direct-sum kernel for x86-64 with AVX2 and FMA: 8 floats or 4 doubles per
// vector. This file is compiled with -mavx2 -mfma -ffp-contract=fast (src/CMakeLists.txt)
// and only called after a run-time CPU check (direct_simd.cpp).
#include "gravity/direct_simd_kernels.hpp"

#if defined(NBODY_HAVE_AVX2_KERNEL)

#if !defined(__AVX2__) || !defined(__FMA__)
#error "direct_simd_avx2.cpp must be compiled with -mavx2 -mfma"
#endif

#include <immintrin.h>

#include <cfloat>

#include "nbody/physics/pair_force.hpp"

namespace nbody::simd::avx2 {
typedef float vfloat8 __attribute__((vector_size(32)));
typedef double vdouble4 __attribute__((vector_size(32)));
}  // namespace nbody::simd::avx2

#include "gravity/direct_simd_kernel.hpp"

namespace nbody {

// Declared before the kernel is instantiated below.
template <>
struct PairMath<simd::avx2::vfloat8> {
  using V = simd::avx2::vfloat8;
  /// vrsqrtps (12 bits) + one Newton step: ~2e-7 relative, no divider.
  static V safe_rsqrt(V r2) {
    const V y0 = _mm256_rsqrt_ps(r2);
    return simd::zero_where_not_positive(r2, simd::rsqrt_newton_step(r2, y0));
  }
};

template <>
struct PairMath<simd::avx2::vdouble4> {
  using V = simd::avx2::vdouble4;
  /// Float rsqrt of r2 rounded to float, then one fourth-order refinement in double
  /// (~1e-16 relative). The float guess is kept finite (r2 below FLT_MIN would give
  /// inf); the solver scales positions so that such r2 only come from bodies closer
  /// than ~1e-19 of the system size.
  static V safe_rsqrt(V r2) {
    const __m128 f = _mm_max_ps(_mm256_cvtpd_ps(r2), _mm_set1_ps(FLT_MIN));
    const V y0 = _mm256_cvtps_pd(_mm_rsqrt_ps(f));
    return simd::zero_where_not_positive(r2, simd::rsqrt_refine_series4(r2, y0));
  }
};

}  // namespace nbody

namespace nbody::simd::avx2 {

#ifndef NBODY_SIMD_AVX2_KF
#define NBODY_SIMD_AVX2_KF 2
#endif
#ifndef NBODY_SIMD_AVX2_KD
#define NBODY_SIMD_AVX2_KD 2
#endif

void accelerations(const KernelArgs<float>& args, std::size_t i_begin, std::size_t i_end) {
  accelerations_range<vfloat8, NBODY_SIMD_AVX2_KF>(args, i_begin, i_end);
}

void accelerations(const KernelArgs<double>& args, std::size_t i_begin, std::size_t i_end) {
  accelerations_range<vdouble4, NBODY_SIMD_AVX2_KD>(args, i_begin, i_end);
}

}  // namespace nbody::simd::avx2

#endif  // NBODY_HAVE_AVX2_KERNEL
