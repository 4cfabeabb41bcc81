// TreeForces::describe_bodies (issue 35): what a rank tells the others about where its bodies
// are, so that each writes it the locally essential tree of its own (tree_gpu_essential.cu).
//
// The pieces are cells of the rank's own tree: those of at most `piece_bodies` bodies whose
// parent has more (and a deepest-level leaf of more, where coincident bodies gather), with
// the small children of a larger cell in the runs of its walk groups (select_pieces), so
// every body is in exactly one and so is every walk group. A cell is compact, and the box of its
// bodies does not reach into another rank's domain, which is a union of cells of the common root
// box. Equal runs of bodies along the curve, the first description, measured badly: a run that
// crosses a jump of the Morton curve spans a box from the halo to the centre, and with 64 runs on 2
// H100s (64M Plummer, relative criterion) one rank shipped the other 86 % of its bodies every step;
// with cells of at most n/1024 bodies, 27 %.
#include <cuda_runtime.h>

#include <algorithm>
#include <cfloat>
#include <string>
#include <utility>
#include <vector>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/launch.cuh"
#include "nbody/physics/opening_criterion.hpp"
#include "tree/cuda/tree_gpu.cuh"
#include "tree/cuda/tree_gpu_group_runs.cuh"

namespace nbody::cuda_tree {

namespace {

/// Appends the (begin, end) tree-order ranges of the pieces cell c is responsible for, at
/// ranges[2 * counter[0]...] (counting all, writing at most `capacity`). limit >= kMaxGroup.
/// The pieces: the root when it holds at most `limit` bodies; a leaf of more; and of a cell
/// of more, each child of at most `limit` (and more than kMaxGroup) bodies, and its smaller
/// children in the runs that make its walk groups (cell_groups, tree_gpu_build.cu). So every
/// walk group lies in one piece, as the essential tree's test needs: a receiver group opens
/// only what a box around it opens, and a group spanning two boxes may open what neither does.
template <class Real>
__global__ void select_pieces(TreeView<Real> t, unsigned cells, unsigned limit, int split,
                              unsigned* ranges, unsigned capacity, unsigned* counter) {
  const unsigned c = blockIdx.x * 256u + threadIdx.x;
  if (c >= cells) return;
  const CellLink lk = t.link[c];
  // The experiment (set_piece_split): cells that hold or border the centre of mass, edge >=
  // distance, split down to the walk groups.
  const Vec4<Real> g = t.com[0];
  auto wide = [&](int k) {
    if (split == 0) return false;
    const Vec4<Real> b = t.box[k];
    return at_centre_of_mass(double(b.w), double(b.x) - g.x, double(b.y) - g.y, double(b.z) - g.z);
  };
  auto whole = [&](int k, const CellLink& l) {
    const unsigned count = l.end - l.begin;
    return count <= limit && (l.first_child < 0 || count <= kMaxGroup || !wide(k));
  };
  auto put = [&](unsigned begin, unsigned end) {
    const unsigned at = atomicAdd(counter, 1u);
    if (at < capacity) ranges[2 * at] = begin, ranges[2 * at + 1] = end;
  };
  if (whole(int(c), lk)) {
    if (c == 0) put(lk.begin, lk.end);  // the root itself is small enough
    return;
  }
  if (lk.first_child < 0) {
    put(lk.begin, lk.end);
    return;
  }
  // The small children in the runs of the cell's walk groups; a larger child of at most
  // `limit` bodies is one piece, a still larger one has pieces of its own.
  small_child_runs(
      t.link, lk, put,
      [&](int k, const CellLink& l) {
        if (whole(k, l)) put(l.begin, l.end);
      },
      !(split == 2 && wide(int(c))));
}

/// Block k (those at or past *count return) summarises piece k:
/// out[8 k ...) = the box of its bodies (lower, upper corner), their smallest and mean |a_old|
/// (a_old in body order through `order`; 0 without). `walked` (tree order, may be null): the
/// bodies counted (none: an empty box, lower above upper).
template <class Real>
__global__ void piece_stats(const unsigned* __restrict__ ranges, const unsigned* __restrict__ count,
                            const Vec4<Real>* __restrict__ sorted,
                            const unsigned* __restrict__ order, const Real* __restrict__ a_old,
                            const unsigned char* __restrict__ walked, int dim, double* out) {
  __shared__ double v[9][256];
  const unsigned k = blockIdx.x, t = threadIdx.x;
  if (k >= *count) return;
  const unsigned begin = ranges[2 * k], end = ranges[2 * k + 1];
  double m[9] = {DBL_MAX, DBL_MAX, DBL_MAX, -DBL_MAX, -DBL_MAX, -DBL_MAX, DBL_MAX, 0.0, 0.0};
  for (unsigned i = begin + t; i < end; i += blockDim.x) {
    if (walked && !walked[i]) continue;
    m[8] += 1;
    const Vec4<Real> b = sorted[i];
    const double p[3] = {double(b.x), double(b.y), dim == 2 ? 0.0 : double(b.z)};
    for (int d = 0; d < 3; ++d) m[d] = fmin(m[d], p[d]), m[3 + d] = fmax(m[3 + d], p[d]);
    if (a_old) {
      const double a = double(a_old[order[i]]);
      m[6] = fmin(m[6], a), m[7] += a;
    }
  }
  for (int d = 0; d < 9; ++d) v[d][t] = m[d];
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (t < half) {
      for (int d = 0; d < 9; ++d) {
        const double a = v[d][t], b = v[d][t + half];
        v[d][t] = d >= 7 ? a + b : d >= 3 && d < 6 ? fmax(a, b) : fmin(a, b);
      }
    }
    __syncthreads();
  }
  if (t == 0) {
    double* o = out + 8 * std::size_t(k);
    for (int d = 0; d < 6; ++d) o[d] = v[d][0];
    o[6] = a_old ? v[6][0] : 0.0;
    o[7] = a_old && v[8][0] > 0 ? v[7][0] / v[8][0] : 0.0;
  }
}

}  // namespace

/// Room for this many pieces; a tree that has more is described again with twice the bodies a
/// piece (a Plummer sphere has ~2-4 n / piece_bodies).
constexpr unsigned kRoom = 16384;

template <class Real>
void TreeForces<Real>::launch_describe(const Real* a_old, unsigned piece_bodies,
                                       PieceScratch& scratch, cudaStream_t s) const {
  const unsigned cells = n_ == 0 ? 0u : cells_;
  scratch.launched = 0;
  if (cells == 0) return;
  piece_bodies = std::max(piece_bodies, kMaxGroup);  // a walk group lies in one piece
  scratch.ranges.reserve(2 * kRoom, "receiver pieces");
  scratch.count.reserve(1, "receiver piece count");
  scratch.stats.reserve(8 * kRoom, "receiver piece boxes");
  scratch.ranges_host.reserve(2 * kRoom + 1);
  scratch.stats_host.reserve(8 * kRoom);
  NBODY_CUDA_CHECK(cudaMemsetAsync(scratch.count.data(), 0, sizeof(unsigned), s));
  select_pieces<Real><<<gpu::blocks_for(cells, 256), 256, 0, s>>>(
      view(n_), cells, piece_bodies, piece_bodies < n_ ? piece_split_ : 0, scratch.ranges.data(),
      kRoom, scratch.count.data());
  NBODY_CUDA_CHECK_LAUNCH("select_pieces");
  piece_stats<Real><<<kRoom, 256, 0, s>>>(
      scratch.ranges.data(), scratch.count.data(), sorted_.data(), order_.data(), a_old,
      active_walk_ ? walked_groups_.data() : nullptr, dim_, scratch.stats.data());
  NBODY_CUDA_CHECK_LAUNCH("piece_stats");
  NBODY_CUDA_CHECK(cudaMemcpyAsync(scratch.ranges_host.data(), scratch.ranges.data(),
                                   2 * kRoom * sizeof(unsigned), cudaMemcpyDeviceToHost, s));
  NBODY_CUDA_CHECK(cudaMemcpyAsync(scratch.ranges_host.data() + 2 * kRoom, scratch.count.data(),
                                   sizeof(unsigned), cudaMemcpyDeviceToHost, s));
  NBODY_CUDA_CHECK(cudaMemcpyAsync(scratch.stats_host.data(), scratch.stats.data(),
                                   8 * kRoom * sizeof(double), cudaMemcpyDeviceToHost, s));
  scratch.launched = piece_bodies;
}

template <class Real>
std::vector<BodyPiece> TreeForces<Real>::describe_bodies(const Real* a_old, unsigned piece_bodies,
                                                         PieceScratch& scratch, cudaStream_t s,
                                                         cudaEvent_t queued) const {
  if (n_ == 0 || cells_ == 0) return {};
  if (scratch.launched == 0) {  // not queued yet: queued now, and waited for on the stream
    launch_describe(a_old, piece_bodies, scratch, s);
    queued = nullptr;
  }
  unsigned pieces = 0;
  for (;;) {
    if (queued) {
      NBODY_CUDA_CHECK(cudaEventSynchronize(std::exchange(queued, nullptr)));
    } else {
      NBODY_CUDA_CHECK(cudaStreamSynchronize(s));
    }
    pieces = scratch.ranges_host.data()[2 * kRoom];
    if (pieces <= kRoom) break;
    launch_describe(a_old, unsigned(std::min<std::size_t>(2ull * scratch.launched, n_)), scratch,
                    s);
  }
  scratch.launched = 0;  // taken
  // In tree order (the kernel's atomic slots vary from run to run): neighbours along the
  // curve are near in space, which the senders' hierarchy of the boxes builds on.
  std::vector<std::pair<unsigned, unsigned>> by_begin(pieces);
  for (unsigned k = 0; k < pieces; ++k) by_begin[k] = {scratch.ranges_host.data()[2 * k], k};
  std::sort(by_begin.begin(), by_begin.end());
  std::vector<BodyPiece> out;
  out.reserve(pieces);
  for (unsigned k = 0; k < pieces; ++k) {
    const double* st = scratch.stats_host.data() + 8 * std::size_t(by_begin[k].second);
    if (st[0] > st[3]) continue;  // no walked body (select_active)
    out.push_back({{st[0], st[1], st[2]}, {st[3], st[4], st[5]}, st[6], st[7]});
  }
  return out;
}

template void TreeForces<float>::launch_describe(const float*, unsigned, PieceScratch&,
                                                 cudaStream_t) const;
template void TreeForces<double>::launch_describe(const double*, unsigned, PieceScratch&,
                                                  cudaStream_t) const;
template std::vector<BodyPiece> TreeForces<float>::describe_bodies(const float*, unsigned,
                                                                   PieceScratch&, cudaStream_t,
                                                                   cudaEvent_t) const;
template std::vector<BodyPiece> TreeForces<double>::describe_bodies(const double*, unsigned,
                                                                    PieceScratch&, cudaStream_t,
                                                                    cudaEvent_t) const;

}  // namespace nbody::cuda_tree
