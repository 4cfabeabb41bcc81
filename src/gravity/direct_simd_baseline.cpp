// The fast direct-sum kernel for any x86-64 (SSE2: 4 floats or 2 doubles per vector),
// used when the CPU lacks AVX2/FMA; elsewhere the same kernel with a portable rsqrt.
// Compiled with -ffp-contract=fast (src/CMakeLists.txt) and no -m flags.
#include <cmath>
#include <cstddef>

#include "nbody/physics/pair_force.hpp"

#if defined(__SSE2__)
#include <immintrin.h>
#endif

namespace nbody::simd::baseline {
typedef float vfloat4 __attribute__((vector_size(16)));
typedef double vdouble2 __attribute__((vector_size(16)));
}  // namespace nbody::simd::baseline

#include "gravity/direct_simd_cells.hpp"
#include "gravity/direct_simd_kernel.hpp"

namespace nbody {

// Declared before the kernel is instantiated below.
#if defined(__SSE2__)

template <>
struct PairMath<simd::baseline::vfloat4> {
  using V = simd::baseline::vfloat4;
  /// rsqrtps (12 bits) + one Newton step: ~2e-7 relative; 0 for r2 == 0.
  static V safe_rsqrt(V r2) {
    return simd::positive_or_zero(simd::rsqrt_newton_step(r2, V(_mm_rsqrt_ps(r2))));
  }
};

template <>
struct PairMath<simd::baseline::vdouble2> {
  using V = simd::baseline::vdouble2;
  /// As the AVX2 kernel: rsqrtps of r2 rounded to float, a third-order refinement in
  /// double (<= 8e-14 relative); 0 for r2 == 0 (and for r2 below FLT_MIN).
  static V safe_rsqrt(V r2) {
    const V y0 = _mm_cvtps_pd(_mm_rsqrt_ps(_mm_cvtpd_ps(r2)));
    return simd::positive_or_zero(simd::rsqrt_refine_series3(r2, y0));
  }
};

#else  // portable: the scalar definition lane by lane

template <class V>
struct PortableVectorRsqrt {
  static V safe_rsqrt(V r2) {
    V y{};
    for (std::size_t l = 0; l < sizeof(V) / sizeof(r2[0]); ++l) {
      y[l] = PairMath<simd::lane_t<V> >::safe_rsqrt(r2[l]);
    }
    return y;
  }
};
template <>
struct PairMath<simd::baseline::vfloat4> : PortableVectorRsqrt<simd::baseline::vfloat4> {};
template <>
struct PairMath<simd::baseline::vdouble2> : PortableVectorRsqrt<simd::baseline::vdouble2> {};

#endif

}  // namespace nbody

namespace nbody::simd::baseline {

/// i-vectors per broadcast of body j (2 x 4 floats, 2 x 2 doubles): with 16 SSE
/// registers, 1 and 4 measured slower.
inline constexpr int kKernelVectors = 2;

void accelerations(const KernelArgs<float>& args, std::size_t i_begin, std::size_t i_end) {
  forces<vfloat4, kKernelVectors>(args, i_begin, i_end);
}

void accelerations(const KernelArgs<double>& args, std::size_t i_begin, std::size_t i_end) {
  forces<vdouble2, kKernelVectors>(args, i_begin, i_end);
}

// The tree's cell kernel (direct_simd_cells.hpp), blocked as the pair kernel (not measured
// separately: the CPUs here all have AVX2).
void cell_accelerations(const CellArgs<float>& a, std::size_t i_begin, std::size_t i_end) {
  cells<vfloat4, kKernelVectors>(a, i_begin, i_end);
}

void cell_accelerations(const CellArgs<double>& a, std::size_t i_begin, std::size_t i_end) {
  cells<vdouble2, kKernelVectors>(a, i_begin, i_end);
}

}  // namespace nbody::simd::baseline
