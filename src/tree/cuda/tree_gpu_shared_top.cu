// The shared top tree of a decomposed run on a GPU rank (TreeForces::share_top_cells,
// parallel/shared_top_tree.hpp): the candidate cells found on the device, their moments
// combined on the host with every rank's (the CPU ranks' code), written back.
//
// A cell's level comes from its half size (each level halves it exactly: the root's binary
// exponent less the cell's), its key range from the key of its first body, in the order of
// the device domain's keys (domain_order below: the tree's keys order a digit's bits the
// other way, so in their order a rank's piece is scattered). A cell can hold
// another rank's bodies only if its key range meets that rank's span of keys, so the
// candidates are the cells around the cuts, a few per level: the kernel tests every cell
// (the test is monotone down the tree, so this finds what a walk from the root would), and
// appends the candidates' records with one atomic each.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/launch.cuh"
#include "core/hilbert.hpp"
#include "core/morton.hpp"
#include "nbody/error.hpp"
#include "parallel/shared_top_tree.hpp"
#include "tree/cuda/tree_gpu.cuh"

namespace nbody::cuda_tree {
namespace {

/// A tree key (x bit 0 of each digit, tree_gpu_build.cu) as the device domain's key of the
/// same grid point (x the most significant bit of each digit, device_domain.cu): a rank owns
/// a contiguous piece of the domain's key line, not of the tree's. Permuting the bits within
/// each digit maps each cell's aligned range of tree keys to an aligned range of domain keys
/// of the same width.
__host__ __device__ inline unsigned long long domain_order(unsigned long long k, int dim) {
  if (dim == 2) return spread2(compact2(k)) << 1 | spread2(compact2(k >> 1));
  return spread3(compact3(k)) << 2 | spread3(compact3(k >> 1)) << 1 | spread3(compact3(k >> 2));
}

/// The smallest and largest domain_order of the n keys into span[0], span[1] (preset to
/// ~0 and 0).
__global__ void key_span(const unsigned long long* keys, unsigned n, int dim,
                         unsigned long long* span) {
  unsigned long long lo = ~0ull, hi = 0;
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const unsigned long long k = domain_order(keys[i], dim);
    lo = k < lo ? k : lo;
    hi = k > hi ? k : hi;
  }
  for (int o = 16; o > 0; o /= 2) {
    const unsigned long long l = __shfl_down_sync(0xffffffffu, lo, o);
    const unsigned long long h = __shfl_down_sync(0xffffffffu, hi, o);
    lo = l < lo ? l : lo;
    hi = h > hi ? h : hi;
  }
  if ((threadIdx.x & 31u) == 0) {
    atomicMin(&span[0], lo);
    atomicMax(&span[1], hi);
  }
}

/// A candidate cell as the device reads it.
template <class Real>
struct TopRecord {
  unsigned cell, level, count, leaf;
  unsigned long long prefix;
  Vec4<Real> box, com, q0, q1;
  Real bmax;
};

/// A shared cell's global moments, to be written back.
template <class Real>
struct TopUpdate {
  unsigned cell;
  unsigned char mark;
  Vec4<Real> com, q0, q1;
  Real bmax;
};

template <class Real>
__global__ void find_top_cells(TreeView<Real> t, unsigned cells, const parallel::KeySpan* spans,
                               int parts, int me, unsigned* count, TopRecord<Real>* out,
                               unsigned capacity) {
  // Every thread reaches the ballot (blocks of whole warps): one atomic a warp, not a cell
  // (before a migration every cell is a candidate, and millions of atomics on one counter
  // took milliseconds).
  const unsigned c = blockIdx.x * blockDim.x + threadIdx.x;
  bool meets = false;
  Vec4<Real> b{};
  CellLink lk{};
  int level = 0;
  unsigned long long prefix = 0;
  if (c < cells) {
    b = t.box[c];
    level = ilogb(double(t.box[0].w)) - ilogb(double(b.w));
    lk = t.link[c];
    const int s = t.dim * (key_bits(t.dim) - level);
    prefix = s >= 64 ? 0ull : t.keys[lk.begin] >> s;
    const unsigned long long lo = s >= 64 ? 0ull : domain_order(prefix << s, t.dim);
    const unsigned long long hi = lo + (s >= 64 ? ~0ull : (1ull << s) - 1ull);
    for (int r = 0; r < parts; ++r) {
      const parallel::KeySpan o = spans[r];
      meets = meets || (r != me && o.has != 0 && o.lo <= hi && lo <= o.hi);
    }
  }
  const unsigned lane = threadIdx.x & 31u, ballot = __ballot_sync(0xffffffffu, meets);
  unsigned base = 0;
  if (lane == 0 && ballot != 0) base = atomicAdd(count, unsigned(__popc(ballot)));
  base = __shfl_sync(0xffffffffu, base, 0);
  if (!meets) return;
  const unsigned i = base + unsigned(__popc(ballot & ((1u << lane) - 1u)));
  if (i >= capacity) return;  // the host sees the count, grows the room and asks again
  TopRecord<Real> r;
  r.cell = c;
  r.level = unsigned(level);
  r.count = lk.end - lk.begin;
  r.leaf = lk.first_child < 0 ? 1u : 0u;
  r.prefix = prefix;
  r.box = b;
  r.com = t.com[c];
  if (t.quad) {
    r.q0 = t.quad[2 * std::size_t(c)];
    r.q1 = t.quad[2 * std::size_t(c) + 1];
  } else {
    r.q0 = r.q1 = Vec4<Real>{};
  }
  r.bmax = t.bmax ? t.bmax[c] : Real(0);
  out[i] = r;
}

template <class Real>
__global__ void write_top_cells(TreeView<Real> t, const TopUpdate<Real>* updates, unsigned n,
                                unsigned char* shared) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const TopUpdate<Real> u = updates[i];
  t.com[u.cell] = u.com;
  if (t.quad) {
    t.quad[2 * std::size_t(u.cell)] = u.q0;
    t.quad[2 * std::size_t(u.cell) + 1] = u.q1;
  }
  if (t.bmax) t.bmax[u.cell] = u.bmax;
  shared[u.cell] = u.mark;
}

}  // namespace

template <class Real>
std::size_t TreeForces<Real>::share_top_cells(ForceReducer& comm, cudaStream_t s) {
  const int parts = comm.parts(), me = comm.part();
  top_shared_ = false;
  top_candidates_ = top_cells_shared_ = 0;
  if (parts <= 1) return 0;
  decomposed_ = true;
  const unsigned cells = n_ == 0 ? 0u : cells_;
  // This rank's span of keys.
  parallel::KeySpan mine{0, 0, 0};
  if (cells > 0) {
    unsigned long long ends[2] = {~0ull, 0ull};
    top_count_.reserve(8, "shared top tree: count and span");  // [0] count, [2..5] span
    auto* span = reinterpret_cast<unsigned long long*>(top_count_.data() + 2);
    NBODY_CUDA_CHECK(cudaMemcpyAsync(span, ends, sizeof ends, cudaMemcpyHostToDevice, s));
    key_span<<<std::min(gpu::blocks_for(n_, 256), 1024u), 256, 0, s>>>(keys_.data(), unsigned(n_),
                                                                       dim_, span);
    NBODY_CUDA_CHECK_LAUNCH("shared top tree: key_span");
    NBODY_CUDA_CHECK(cudaMemcpyAsync(ends, span, sizeof ends, cudaMemcpyDeviceToHost, s));
    NBODY_CUDA_CHECK(cudaStreamSynchronize(s));
    mine = {1, ends[0], ends[1]};
  }
  const std::vector<parallel::KeySpan> spans = parallel::gather_key_spans(mine, comm);

  // The candidates' records, from the device.
  std::vector<TopRecord<Real>> found;
  std::size_t candidates = 0;
  if (cells > 0) {
    const TreeView<Real> t = view(n_);
    DeviceBuffer<parallel::KeySpan> device_spans;
    device_spans.reserve(spans.size(), "shared top tree: key spans");
    NBODY_CUDA_CHECK(cudaMemcpyAsync(device_spans.data(), spans.data(),
                                     spans.size() * sizeof(parallel::KeySpan),
                                     cudaMemcpyHostToDevice, s));
    unsigned capacity = 4096, count = 0;
    for (;;) {
      top_records_.reserve(std::size_t(capacity) * sizeof(TopRecord<Real>),
                           "shared top tree: candidate cells");
      NBODY_CUDA_CHECK(cudaMemsetAsync(top_count_.data(), 0, sizeof(unsigned), s));
      find_top_cells<Real><<<gpu::blocks_for(cells, 256), 256, 0, s>>>(
          t, cells, device_spans.data(), parts, me, top_count_.data(),
          reinterpret_cast<TopRecord<Real>*>(top_records_.data()), capacity);
      NBODY_CUDA_CHECK_LAUNCH("shared top tree: find_top_cells");
      NBODY_CUDA_CHECK(
          cudaMemcpyAsync(&count, top_count_.data(), sizeof count, cudaMemcpyDeviceToHost, s));
      NBODY_CUDA_CHECK(cudaStreamSynchronize(s));
      candidates = count;
      if (count <= capacity || count > parallel::kMaxTopCells) break;
      capacity = count + count / 4;
    }
    found.resize(count <= capacity ? count : 0);  // too many: given up below
    NBODY_CUDA_CHECK(cudaMemcpyAsync(found.data(), top_records_.data(),
                                     found.size() * sizeof(TopRecord<Real>), cudaMemcpyDeviceToHost,
                                     s));
    NBODY_CUDA_CHECK(cudaStreamSynchronize(s));
    // The atomics' order is not the cells': by cell, so that the records are the same every run.
    std::sort(found.begin(), found.end(),
              [](const TopRecord<Real>& a, const TopRecord<Real>& b) { return a.cell < b.cell; });
  }
  top_candidates_ = candidates;
  // Every rank gives up together when one has too many candidates (kMaxTopCells).
  if (std::size_t(comm.max(int(std::min(candidates, parallel::kMaxTopCells + 1)))) >
      parallel::kMaxTopCells)
    return 0;
  std::vector<parallel::TopCell> records;
  for (const TopRecord<Real>& r : found) {
    records.push_back(
        {r.prefix, r.count, r.level, unsigned(me), r.leaf, 0, double(r.com.w), double(r.com.x),
         double(r.com.y), double(r.com.z), double(r.bmax),
         Quadrupole<double>{double(r.q0.x), double(r.q0.y), double(r.q0.z), double(r.q0.w),
                            double(r.q1.x), double(r.q1.y), double(r.q1.z)}});
  }
  const std::vector<parallel::TopCell> all = parallel::gather_top_cells(records, dim_, comm);

  // The shared cells' global moments, written back with their marks.
  std::vector<TopUpdate<Real>> updates;
  for (std::size_t i = 0; i < records.size(); ++i) {
    const TopRecord<Real>& r = found[i];
    const double centre[3] = {double(r.box.x), double(r.box.y), double(r.box.z)};
    const parallel::GlobalCell g = parallel::global_cell(all, records[i], centre, dim_);
    if (g.copies <= 1) continue;
    TopUpdate<Real> u{};
    u.cell = r.cell;
    u.mark = g.adder == unsigned(me) ? kAddingTopCell : kSilentTopCell;
    u.com = {Real(g.comx), Real(g.comy), Real(g.comz), Real(g.mass)};
    u.q0 = {Real(g.quad.xx), Real(g.quad.yy), Real(g.quad.zz), Real(g.quad.xy)};
    u.q1 = {Real(g.quad.xz), Real(g.quad.yz), Real(g.quad.tr), Real(0)};
    u.bmax = Real(g.bmax);
    updates.push_back(u);
  }
  if (cells > 0) {
    shared_.reserve(cell_capacity_, "shared top tree: marks");
    NBODY_CUDA_CHECK(cudaMemsetAsync(shared_.data(), 0, cells, s));
    top_shared_ = true;
  }
  if (!updates.empty()) {
    DeviceBuffer<TopUpdate<Real>> device_updates;
    device_updates.reserve(updates.size(), "shared top tree: updates");
    NBODY_CUDA_CHECK(cudaMemcpyAsync(device_updates.data(), updates.data(),
                                     updates.size() * sizeof(TopUpdate<Real>),
                                     cudaMemcpyHostToDevice, s));
    write_top_cells<Real><<<gpu::blocks_for(updates.size(), 256), 256, 0, s>>>(
        view(n_), device_updates.data(), unsigned(updates.size()), shared_.data());
    NBODY_CUDA_CHECK_LAUNCH("shared top tree: write_top_cells");
    // The host's vectors and the device buffers above must outlive the copies.
    NBODY_CUDA_CHECK(cudaStreamSynchronize(s));
  }
  top_cells_shared_ = updates.size();
  return updates.size();
}

template std::size_t TreeForces<float>::share_top_cells(ForceReducer&, cudaStream_t);
template std::size_t TreeForces<double>::share_top_cells(ForceReducer&, cudaStream_t);

}  // namespace nbody::cuda_tree
