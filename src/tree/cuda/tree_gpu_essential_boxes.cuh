#pragma once
// A receiver's boxes as the essential tree's open test reads them (tree_gpu_essential.cu):
// each box made a little stricter than any walk group inside it (test_box, the reasons in
// that file's comment), the receiver's boxes as a bounding volume hierarchy (box_hierarchy),
// and the device test of a cell against one box (opens) and against the hierarchy
// (any_opens), with the walk's own helpers of physics/opening_criterion.hpp.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "nbody/physics/opening_criterion.hpp"
#include "tree/cuda/tree_gpu.cuh"

namespace nbody::cuda_tree {

/// The receiver box as the open test reads it (already widened, criterion constants scaled).
template <class Real>
struct TestBox {
  Real cx, cy, cz, hx, hy, hz, alpha_a, theta2;
};

/// The walk's test (tree_walk) for a group whose box is b: does it open the cell of box q
/// (centre, half), centre of mass and mass m, b_max^2 bmax2 (< 0: not the bmax criterion)?
template <class Real>
__device__ __forceinline__ bool opens(const Vec4<Real>& q, const Vec4<Real>& m, Real bmax2, int dim,
                                      Real slack, const TestBox<Real>& b) {
  const Real h = q.w, s = Real(2) * h;
  if (boxes_overlap(q.x, q.y, q.z, h, h, dim == 2 ? Real(0) : h, b.cx, b.cy, b.cz, b.hx, b.hy, b.hz,
                    slack))
    return true;
  const Real d2 = distance2_point_box(m.x, m.y, m.z, b.cx, b.cy, b.cz, b.hx, b.hy, b.hz);
  if (b.alpha_a > Real(0)) return relative_must_open(m.w * s * s, b.alpha_a, d2, s * s);
  return bh_must_open(bmax2 >= Real(0) ? bmax2 : s * s, b.theta2, d2);
}

/// A receiver's boxes as a bounding volume hierarchy: a complete binary tree in an array
/// (node k's children 2k + 1 and 2k + 2; the boxes are the leaves from `leaves` - 1 on, in
/// the receiver's tree order, padded with empty nodes, hx < 0), each inner node the union
/// of its children with their smallest alpha_a. The test is monotone in the box and in
/// alpha_a, so a node that does not open a cell has no box below it that does.
template <class Real>
struct BoxTree {
  const TestBox<Real>* nodes;
  unsigned leaves;
};

/// Does some box of the hierarchy open the cell (depth-first, pruned)?
template <class Real>
__device__ bool any_opens(const Vec4<Real>& q, const Vec4<Real>& m, Real bmax2, int dim, Real slack,
                          BoxTree<Real> t) {
  unsigned stack[40];  // depth <= 32, a pair pushed per level
  int top = 0;
  stack[top++] = 0;
  while (top > 0) {
    const unsigned k = stack[--top];
    const TestBox<Real> b = t.nodes[k];
    if (b.hx < Real(0) || !opens(q, m, bmax2, dim, slack, b)) continue;
    if (k >= t.leaves - 1) return true;
    stack[top++] = 2 * k + 2;
    stack[top++] = 2 * k + 1;
  }
  return false;
}

/// A box made stricter than any walk group inside it: widened by 1e-4 of its largest half
/// extent plus a few ulps of its centre, theta^2 and alpha_a times 1 - 1e-4.
template <class Real>
TestBox<Real> test_box(const ReceiverBox<Real>& r, double theta, bool relative) {
  // Stricter than any group inside the box (tree_gpu_essential.cu's comment).
  const double ulps = sizeof(Real) == 4 ? 1e-6 : 1e-14;
  const double margin =
      1e-4 * std::max({double(r.hx), double(r.hy), double(r.hz)}) +
      ulps * (std::fabs(double(r.cx)) + std::fabs(double(r.cy)) + std::fabs(double(r.cz)));
  return {r.cx,
          r.cy,
          r.cz,
          Real(double(r.hx) + margin),
          Real(double(r.hy) + margin),
          Real(double(r.hz) + margin),
          relative ? Real(double(r.alpha_a) * (1 - 1e-4)) : Real(0),  // else by theta
          Real(theta * theta * (1 - 1e-4))};
}

/// The smallest box holding both (an empty one: the other), with the smaller alpha_a.
template <class Real>
TestBox<Real> merged(const TestBox<Real>& a, const TestBox<Real>& b) {
  if (a.hx < Real(0)) return b;
  if (b.hx < Real(0)) return a;
  const Real ac[3] = {a.cx, a.cy, a.cz}, ah[3] = {a.hx, a.hy, a.hz};
  const Real bc[3] = {b.cx, b.cy, b.cz}, bh[3] = {b.hx, b.hy, b.hz};
  Real c[3], h[3];
  for (int d = 0; d < 3; ++d) {
    const double lo = std::min(double(ac[d]) - ah[d], double(bc[d]) - bh[d]);
    const double hi = std::max(double(ac[d]) + ah[d], double(bc[d]) + bh[d]);
    c[d] = Real(0.5 * (lo + hi));
    // Rounded outwards: the node must hold its children's boxes.
    h[d] = Real(0.5 * (hi - lo) * (1 + 1e-6) + 1e-6 * (std::fabs(lo) + std::fabs(hi)));
  }
  return {c[0], c[1], c[2], h[0], h[1], h[2], std::min(a.alpha_a, b.alpha_a), a.theta2};
}

/// A receiver's boxes (in its order) as the hierarchy BoxTree reads: 2 leaves - 1 nodes,
/// leaves the first power of 2 at or above the boxes' count, padded with empty boxes.
template <class Real>
std::vector<TestBox<Real>> box_hierarchy(const std::vector<ReceiverBox<Real>>& receiver,
                                         double theta, bool relative) {
  static_assert(sizeof(TestBox<Real>) == 8 * sizeof(Real));
  std::size_t leaves = 1;
  while (leaves < receiver.size()) leaves *= 2;
  std::vector<TestBox<Real>> tree(2 * leaves - 1);
  for (std::size_t j = 0; j < leaves; ++j) {
    tree[leaves - 1 + j] = j < receiver.size() ? test_box(receiver[j], theta, relative)
                                               : TestBox<Real>{0, 0, 0, -1, -1, -1, 0, 0};  // empty
  }
  for (std::size_t k = leaves - 1; k-- > 0;) tree[k] = merged(tree[2 * k + 1], tree[2 * k + 2]);
  return tree;
}

}  // namespace nbody::cuda_tree
