#pragma once
// Private to the fast CPU direct sum: the kernel entry points, compiled once per ISA
// (direct_simd_baseline.cpp, direct_simd_avx2.cpp), and the hooks the tests use to
// pick one. The solver itself is in direct_simd.cpp.
#include <algorithm>
#include <cstddef>
#include <memory>
#include <string_view>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "nbody/gravity.hpp"

namespace nbody::simd {

/// i-bodies per OpenMP work item. The packed arrays are padded to a multiple of it,
/// and it is a multiple of every kernel's i-step (lanes x i-vectors per j broadcast).
inline constexpr std::size_t kBlock = 64;
/// Alignment of the packed arrays, in bytes (a cache line; enough for any vector load).
inline constexpr std::size_t kAlignment = 64;
/// Every kernel's i-step (lanes x i-vectors per j broadcast) divides this, so any i-range
/// whose ends are multiples of it is valid. The tree pads its groups to it (not to kBlock:
/// its groups hold ~20-64 bodies, and padding 20 to 64 would waste two thirds of the work).
inline constexpr std::size_t kStep = 32;

/// One evaluation's packed data: structure of arrays, kAlignment-aligned, padded to a
/// multiple of kBlock (direct sum) or kStep (tree) i-bodies. The kernels read sources
/// j = 0 .. n-1 from x, y, z, m and targets i from tx, ty, tz, and write the i-range they
/// are given; the padding i-bodies' results are discarded. The direct sum passes its own
/// arrays as targets (tx == x); the tree passes a group of bodies as targets and its
/// interaction list (cells and bodies) as sources.
template <class Real>
struct KernelArgs {
  const Real* x;
  const Real* y;
  const Real* z;
  const Real* m;
  std::size_t n;  // real bodies
  Real eps2;      // softening^2
  Real* ax;       // accelerations per unit G, padded length
  Real* ay;
  Real* az;
  const Real* tx;  // target (i) positions, padded length; may equal x, y, z
  const Real* ty;
  const Real* tz;
  // Potentials per unit G, padded length, or nullptr for none (the kernel without them,
  // no slower than before they existed). With them, the targets must be sources too:
  // target i is source self_first + i, whose term is left out of phi_i (its acceleration
  // term is 0 anyway, but its potential is -m_i/eps with softening). The direct sum
  // passes 0, the tree where the group's own bodies start in its interaction list.
  Real* phi = nullptr;
  std::size_t self_first = 0;
};

/// One accepted cell of the tree's quadrupole list (tree_walk.cpp): centre of mass and
/// mass, scaled as KernelArgs' sources are, and the components of its Quadrupole
/// (multipole.hpp: the traceless tensor and the trace of the second moment, for the
/// softening term), scaled by the masses' factor times the positions' factor squared, so
/// that its accelerations and potentials scale back as the monopole's do. One record per
/// cell (the kernel broadcasts a cell's values to all lanes, from any address).
template <class Real>
struct CellSource {
  Real x, y, z, m;
  Real xx, yy, zz, xy, xz, yz, tr;
};

/// The cell kernel's data: n cells, the targets and their sums, as in KernelArgs.
template <class Real>
struct CellArgs {
  const CellSource<Real>* cells;
  std::size_t n;
  Real eps2;  // softening^2
  Real* ax;   // accelerations per unit G, padded length: added to
  Real* ay;
  Real* az;
  const Real* tx;  // target positions, padded length
  const Real* ty;
  const Real* tz;
  Real* phi = nullptr;  // potentials per unit G, added to; nullptr for none
};

// Kernel entry points: accelerations (and potentials when args.phi is set) of i-bodies
// [i_begin, i_end) from all n bodies. i_begin and i_end must be multiples of kStep.
// Thread-safe for disjoint i-ranges.
// cell_accelerations: ADDS to a.ax.. (and a.phi when set) the monopoles and quadrupoles of
// a.cells for targets [i_begin, i_end) (after the body kernel filled them). i_begin must be
// a multiple of kStep; i_end may be any count: it is rounded up to the kernel's own step
// (a divisor of kStep), so the arrays must be padded to a multiple of kStep. No cell is a
// target, so there is no self term.
namespace baseline {  // any x86-64 (SSE2), or portable code elsewhere
void accelerations(const KernelArgs<float>& args, std::size_t i_begin, std::size_t i_end);
void accelerations(const KernelArgs<double>& args, std::size_t i_begin, std::size_t i_end);
void cell_accelerations(const CellArgs<float>& a, std::size_t i_begin, std::size_t i_end);
void cell_accelerations(const CellArgs<double>& a, std::size_t i_begin, std::size_t i_end);
}  // namespace baseline
#if defined(NBODY_HAVE_AVX2_KERNEL)
namespace avx2 {  // x86-64 with AVX2 and FMA; call only when isa_supported(Isa::Avx2)
void accelerations(const KernelArgs<float>& args, std::size_t i_begin, std::size_t i_end);
void accelerations(const KernelArgs<double>& args, std::size_t i_begin, std::size_t i_end);
void cell_accelerations(const CellArgs<float>& a, std::size_t i_begin, std::size_t i_end);
void cell_accelerations(const CellArgs<double>& a, std::size_t i_begin, std::size_t i_end);
}  // namespace avx2
#endif

/// Instruction sets the kernel is compiled for.
enum class Isa { Baseline, Avx2 };

[[nodiscard]] std::string_view to_string(Isa isa);
/// True when the kernel for isa is compiled in and this CPU (and OS) can run it.
[[nodiscard]] bool isa_supported(Isa isa);
/// The fastest supported kernel (what make_direct_simd uses).
[[nodiscard]] Isa best_isa();

/// The tree's cell kernel (cell_accelerations) compiled for isa: the tree walk takes
/// best_isa()'s, the tests compare them. Throws nbody::Error when isa is not supported
/// here.
template <class Real>
using CellKernel = void (*)(const CellArgs<Real>& a, std::size_t i_begin, std::size_t i_end);
template <class Real>
[[nodiscard]] CellKernel<Real> cell_kernel(Isa isa);

/// The body kernel (accelerations) compiled for isa, the same way: the direct sum, the
/// ring and the test particles' sums take best_isa()'s.
template <class Real>
using BodyKernel = void (*)(const KernelArgs<Real>& a, std::size_t i_begin, std::size_t i_end);
template <class Real>
[[nodiscard]] BodyKernel<Real> body_kernel(Isa isa);

/// `kernel` over the i-blocks [first, last) of `args` (kBlock targets each), on an OpenMP
/// team of at most `threads` threads (0: OpenMP's); one block takes no region, whose entry
/// costs more than a few-body evaluation. Each block's results are the same on any team.
template <class Real>
void run_blocks(BodyKernel<Real> kernel, const KernelArgs<Real>& args, std::ptrdiff_t first,
                std::ptrdiff_t last, int threads) {
#if defined(_OPENMP)
  const int wanted = threads > 0 ? threads : omp_get_max_threads();
  const int team = int(std::max<std::ptrdiff_t>(1, std::min<std::ptrdiff_t>(wanted, last - first)));
  if (team > 1) {
#pragma omp parallel for schedule(static) num_threads(team)
    for (std::ptrdiff_t b = first; b < last; ++b) {
      kernel(args, std::size_t(b) * kBlock, std::size_t(b + 1) * kBlock);
    }
    return;
  }
#endif
  (void)threads;
  for (std::ptrdiff_t b = first; b < last; ++b) {
    kernel(args, std::size_t(b) * kBlock, std::size_t(b + 1) * kBlock);
  }
}

/// make_direct_simd with the kernel chosen by the caller (tests compare the kernels);
/// throws nbody::Error when isa is not supported here.
[[nodiscard]] std::unique_ptr<GravitySolver> make_direct_simd(Precision precision, double G,
                                                              double softening, int threads,
                                                              Isa isa);

}  // namespace nbody::simd
