// The fast direct-sum kernel for x86-64 with AVX2 and FMA: 8 floats or 4 doubles per
// vector. Compiled with -mavx2 -mfma -ffp-contract=fast (src/CMakeLists.txt); called only
// after a run-time CPU check (direct_simd.cpp).
#include "gravity/direct_simd_kernels.hpp"

#if defined(NBODY_HAVE_AVX2_KERNEL)

#if !defined(__AVX2__) || !defined(__FMA__)
#error "direct_simd_avx2.cpp must be compiled with -mavx2 -mfma"
#endif

// The kernel's speed is set by latency more than by arithmetic: a pair is a chain of
// ~45 (float) to ~64 (double) cycles of dependent operations, more than the out-of-order
// window hides (taking the double kernel's float rsqrt, 14 cycles, off the chain makes it
// ~17% faster). So four i-vectors share each j (kKernelVectors), and GCC is asked to
// schedule before register allocation too (-fschedule-insns, set for this file in
// src/CMakeLists.txt), which interleaves their four chains; on x86 it otherwise schedules
// only after allocation, which keeps them in source order. Pairs/s, one thread, Zen 3 at
// 3.2 GHz, N = 4096: 2 i-vectors 2.68e9 float, 0.83e9 double; 4 i-vectors 2.47e9 and
// 0.75e9 (spills); 4 i-vectors with -fschedule-insns 2.70e9 and 0.97e9.

#include <immintrin.h>

#include "nbody/physics/pair_force.hpp"

namespace nbody::simd::avx2 {
typedef float vfloat8 __attribute__((vector_size(32)));
typedef double vdouble4 __attribute__((vector_size(32)));
}  // namespace nbody::simd::avx2

#include "gravity/direct_simd_cells.hpp"
#include "gravity/direct_simd_kernel.hpp"

namespace nbody {

// Declared before the kernel is instantiated below.
template <>
struct PairMath<simd::avx2::vfloat8> {
  using V = simd::avx2::vfloat8;
  /// vrsqrtps (12 bits) + one Newton step: ~2e-7 relative; 0 for r2 == 0.
  static V safe_rsqrt(V r2) {
    return simd::positive_or_zero(simd::rsqrt_newton_step(r2, V(_mm256_rsqrt_ps(r2))));
  }
};

template <>
struct PairMath<simd::avx2::vdouble4> {
  using V = simd::avx2::vdouble4;
  /// rsqrtps of r2 rounded to float, then a third-order refinement in double
  /// (<= 8e-14 relative); 0 for r2 == 0. r2 must be within float range for the guess:
  /// the solver scales positions so that r^2 <= ~13; r2 below FLT_MIN (bodies closer
  /// than ~1e-19 of the system's size) gives 0, i.e. that pair is skipped.
  static V safe_rsqrt(V r2) {
    const V y0 = _mm256_cvtps_pd(_mm_rsqrt_ps(_mm256_cvtpd_ps(r2)));
    return simd::positive_or_zero(simd::rsqrt_refine_series3(r2, y0));
  }
};

}  // namespace nbody

namespace nbody::simd::avx2 {

/// 1/sqrt through the divider (vsqrtp* + vdivp*, correctly rounded); 0 for r2 == 0.
/// The divider is a separate unit beside the two FMA pipes, so the kernel gives it some of
/// its i-vectors while the others use rsqrt + refinement on the FMA pipes: both units then
/// work at once. Measured (Zen 3, one thread, N = 16384, medians of 7): float 2.66e9 pairs/s
/// with no divider vector, 2.45e9 with 1 of 4 (noisy), 2.80e9 with 2 of 4; double 0.96e9
/// with none, 0.96e9 with 1, 1.00e9 with 2, 1.05e9 with 3, 0.83e9 with all 4.
struct DividerRsqrt {
  static vdouble4 safe_rsqrt(vdouble4 r2) {
    const vdouble4 y = 1.0 / vdouble4(_mm256_sqrt_pd(r2));
    return vdouble4(_mm256_and_pd(y, _mm256_cmp_pd(r2, vdouble4{}, _CMP_GT_OQ)));
  }
  static vfloat8 safe_rsqrt(vfloat8 r2) {
    const vfloat8 y = 1.0f / vfloat8(_mm256_sqrt_ps(r2));
    return vfloat8(_mm256_and_ps(y, _mm256_cmp_ps(r2, vfloat8{}, _CMP_GT_OQ)));
  }
};

/// i-vectors per broadcast of body j (4 x 8 floats, 4 x 4 doubles): four independent
/// dependency chains per j. With -fschedule-insns, 2, 3 and 6 are 15-25% slower for double.
inline constexpr int kKernelVectors = 4;
/// Of those, how many take 1/sqrt through the divider (see DividerRsqrt).
inline constexpr int kFloatDividerVectors = 2;
inline constexpr int kDoubleDividerVectors = 3;
/// i-vectors per broadcast with potentials (direct_simd_kernel.hpp:
/// forces_with_potential; each lane still takes 1/sqrt as without, so the accelerations
/// keep their bits). Measured, one thread, N = 4096, time with potentials over time
/// without: float 4 vectors 1.18, 2 (the passes interleaved, each with one divider vector)
/// 1.08, 2 with contiguous passes (one all rsqrt, one all divider) 1.13; double 4 vectors
/// 1.11, 2 with contiguous passes 1.20.
inline constexpr int kFloatPotentialVectors = 2;
inline constexpr int kDoublePotentialVectors = 4;

void accelerations(const KernelArgs<float>& args, std::size_t i_begin, std::size_t i_end) {
  forces<vfloat8, kKernelVectors, DividerRsqrt, kFloatDividerVectors, kFloatPotentialVectors>(
      args, i_begin, i_end);
}

void accelerations(const KernelArgs<double>& args, std::size_t i_begin, std::size_t i_end) {
  forces<vdouble4, kKernelVectors, DividerRsqrt, kDoubleDividerVectors, kDoublePotentialVectors>(
      args, i_begin, i_end);
}

/// The tree's cell kernel (direct_simd_cells.hpp): i-vectors per broadcast cell, and of
/// those how many take 1/sqrt through the divider. A cell costs ~36 multiply/FMA operations
/// against a pair's ~13, so the FMA pipes rather than latency set its speed, and more
/// i-vectors only add spills. Measured, one thread, 96 targets x 1000 cells, ns per
/// interaction (the pair kernel: float 0.36, double 0.95): float 1 vector 0.83, 2 vectors
/// 0.84, 1 vector through the divider 0.89, 4 vectors (2 divider) 1.11; double 1 vector
/// 2.21, through the divider 1.95, 2 vectors (1 divider) 1.94, 4 (2 divider) 2.28; with
/// potentials float 1 vector 0.87, 2 vectors 0.95; double 1 vector through the divider
/// 1.97, 2 vectors (1 divider) 2.18 (before multipole.hpp's trace term, one FMA more). One
/// vector also pads a group's targets only to 8 (4).
inline constexpr int kCellVectors = 1;
inline constexpr int kFloatCellDividerVectors = 0;
inline constexpr int kDoubleCellDividerVectors = 1;

void cell_accelerations(const CellArgs<float>& a, std::size_t i_begin, std::size_t i_end) {
  cells<vfloat8, kCellVectors, DividerRsqrt, kFloatCellDividerVectors>(a, i_begin, i_end);
}

void cell_accelerations(const CellArgs<double>& a, std::size_t i_begin, std::size_t i_end) {
  cells<vdouble4, kCellVectors, DividerRsqrt, kDoubleCellDividerVectors>(a, i_begin, i_end);
}

}  // namespace nbody::simd::avx2

#endif  // NBODY_HAVE_AVX2_KERNEL
