#pragma once
// The byte layout of a packed locally essential tree (tree_gpu_essential.cu writes it, a
// receiver's walk reads it through TreeForces::essential_sources): each section aligned to a
// Vec4<Real>.
#include <cstddef>

#include "core/cuda/vec4.cuh"
#include "tree/cuda/tree_gpu_sources.cuh"
#include "tree/cuda/tree_gpu_view.cuh"

namespace nbody::cuda_tree {

/// The packed buffer's sections (byte offsets), each aligned to a Vec4<Real>.
template <class Real>
struct Layout {
  std::size_t box, com, quad, link, bmax, shared, bodies, end;
};

inline constexpr std::size_t round_up(std::size_t x, std::size_t a) {
  return (x + a - 1) / a * a;
}

template <class Real>
inline Layout<Real> layout(EssentialCounts c, bool quadrupole, bool bmax, bool shared) {
  constexpr std::size_t v = sizeof(Vec4<Real>);
  Layout<Real> l{};
  l.box = 0;
  l.com = l.box + c.cells * v;
  l.quad = l.com + c.cells * v;
  l.link = l.quad + (quadrupole ? 2 * c.cells * v : 0);
  l.bmax = l.link + round_up(c.cells * sizeof(CellLink), v);
  l.shared = l.bmax + (bmax ? round_up(round_up(c.cells, 4) * sizeof(Real), v) : 0);
  l.bodies = l.shared + (shared ? round_up(c.cells, v) : 0);
  l.end = l.bodies + c.bodies * v;
  return l;
}

/// A packed tree's arrays in its buffer, for writing it (the sender's write_essential, the
/// receiver's joined tree: tree_gpu_merge.cu); quad, bmax and shared null where absent.
template <class Real>
struct Packed {
  Vec4<Real>* box;
  Vec4<Real>* com;
  Vec4<Real>* quad;
  CellLink* link;
  Real* bmax;
  unsigned char* shared;
  Vec4<Real>* bodies;
};

/// A cell's box, moments, b_max and shared-top mark from the source arrays (cell `c`) to a
/// packed tree (cell `i`); its link is the caller's. quad, bmax, shared: null where absent
/// (a null source mark is 0).
template <class Real>
__device__ inline void pack_cell(const Vec4<Real>* box, const Vec4<Real>* com,
                                 const Vec4<Real>* quad, const Real* bmax,
                                 const unsigned char* shared, unsigned c, const Packed<Real>& out,
                                 unsigned i) {
  out.box[i] = box[c];
  out.com[i] = com[c];
  if (out.quad) {
    out.quad[2 * std::size_t(i)] = quad[2 * std::size_t(c)];
    out.quad[2 * std::size_t(i) + 1] = quad[2 * std::size_t(c) + 1];
  }
  if (out.bmax) out.bmax[i] = bmax[c];
  if (out.shared) out.shared[i] = shared != nullptr ? shared[c] : 0;
}

template <class Real>
inline Packed<Real> packed_at(void* buffer, EssentialCounts c, bool quadrupole, bool bmax,
                              bool shared) {
  const Layout<Real> l = layout<Real>(c, quadrupole, bmax, shared);
  auto* base = static_cast<unsigned char*>(buffer);
  return {reinterpret_cast<Vec4<Real>*>(base + l.box),
          reinterpret_cast<Vec4<Real>*>(base + l.com),
          quadrupole ? reinterpret_cast<Vec4<Real>*>(base + l.quad) : nullptr,
          reinterpret_cast<CellLink*>(base + l.link),
          bmax ? reinterpret_cast<Real*>(base + l.bmax) : nullptr,
          shared ? base + l.shared : nullptr,
          reinterpret_cast<Vec4<Real>*>(base + l.bodies)};
}

}  // namespace nbody::cuda_tree
