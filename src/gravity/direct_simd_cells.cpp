// The body and cell kernels for an instruction set (direct_simd_kernels.hpp: body_kernel,
// cell_kernel); the kernels themselves are compiled per ISA in direct_simd_baseline.cpp and
// direct_simd_avx2.cpp (direct_simd_cells.hpp).
#include <string>

#include "gravity/direct_simd_kernels.hpp"
#include "nbody/error.hpp"

namespace nbody::simd {

template <class Real>
CellKernel<Real> cell_kernel(Isa isa) {
  if (!isa_supported(isa)) {
    throw Error("tree cell kernel " + std::string(to_string(isa)) +
                ": not supported by this CPU or build");
  }
#if defined(NBODY_HAVE_AVX2_KERNEL)
  if (isa == Isa::Avx2) return &avx2::cell_accelerations;
#endif
  return &baseline::cell_accelerations;
}

template CellKernel<float> cell_kernel<float>(Isa);
template CellKernel<double> cell_kernel<double>(Isa);

template <class Real>
BodyKernel<Real> body_kernel(Isa isa) {
  if (!isa_supported(isa)) {
    throw Error("direct-sum kernel " + std::string(to_string(isa)) +
                ": not supported by this CPU or build");
  }
#if defined(NBODY_HAVE_AVX2_KERNEL)
  if (isa == Isa::Avx2) return &avx2::accelerations;
#endif
  return &baseline::accelerations;
}

template BodyKernel<float> body_kernel<float>(Isa);
template BodyKernel<double> body_kernel<double>(Isa);

}  // namespace nbody::simd
