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
#include <cstring>
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

__global__ void key_span_init(unsigned long long* span) {
  span[0] = ~0ull;
  span[1] = 0ull;
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

void make_event(cudaEvent_t& e) {
  if (!e) NBODY_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
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
void TreeForces<Real>::launch_top_span(cudaStream_t s) {
  top_.span_launched = false;
  if (n_ == 0 || cells_ == 0) return;
  make_event(top_.span_ready);
  top_.words.reserve(4, "shared top tree: count and span");
  top_.words_host.reserve(4);
  unsigned long long* span = top_.words.data() + 1;
  key_span_init<<<1, 1, 0, s>>>(span);
  NBODY_CUDA_CHECK_LAUNCH("shared top tree: key_span_init");
  key_span<<<std::min(gpu::blocks_for(n_, 256), 1024u), 256, 0, s>>>(keys_.data(), unsigned(n_),
                                                                     dim_, span);
  NBODY_CUDA_CHECK_LAUNCH("shared top tree: key_span");
  NBODY_CUDA_CHECK(cudaMemcpyAsync(top_.words_host.data() + 1, span, 2 * sizeof(unsigned long long),
                                   cudaMemcpyDeviceToHost, s));
  NBODY_CUDA_CHECK(cudaEventRecord(top_.span_ready, s));
  top_.span_launched = true;
}

template <class Real>
std::size_t TreeForces<Real>::share_top_cells(ForceReducer& comm, cudaStream_t s,
                                              cudaStream_t side) {
  const int parts = comm.parts(), me = comm.part();
  top_shared_ = false;
  top_candidates_ = top_cells_shared_ = 0;
  if (parts <= 1) return 0;
  decomposed_ = true;
  const unsigned cells = n_ == 0 ? 0u : cells_;
  // This rank's span of keys: the host waits for the span alone (the stream may have the
  // pieces' kernels queued after it).
  parallel::KeySpan mine{0, 0, 0};
  if (cells > 0) {
    if (!top_.span_launched) launch_top_span(s);
    NBODY_CUDA_CHECK(cudaEventSynchronize(top_.span_ready));
    mine = {1, top_.words_host.data()[1], top_.words_host.data()[2]};
  }
  top_.span_launched = false;
  const std::vector<parallel::KeySpan> spans = parallel::gather_key_spans(mine, comm);

  // The candidates' records, from the device: found on `side` (first in the block
  // scheduler's queue in a decomposed run), after the build (the span's event).
  std::vector<TopRecord<Real>> found;
  std::size_t candidates = 0;
  if (cells > 0) {
    const cudaStream_t q = side ? side : s;
    if (side) NBODY_CUDA_CHECK(cudaStreamWaitEvent(side, top_.span_ready, 0));
    const TreeView<Real> t = view(n_);
    const std::size_t span_bytes = spans.size() * sizeof(parallel::KeySpan);
    top_.spans.reserve(span_bytes, "shared top tree: key spans");
    top_.spans_host.reserve(span_bytes);
    std::memcpy(top_.spans_host.data(), spans.data(), span_bytes);
    NBODY_CUDA_CHECK(cudaMemcpyAsync(top_.spans.data(), top_.spans_host.data(), span_bytes,
                                     cudaMemcpyHostToDevice, q));
    unsigned capacity = 4096, count = 0;
    for (;;) {
      const std::size_t bytes = std::size_t(capacity) * sizeof(TopRecord<Real>);
      top_.records.reserve(bytes, "shared top tree: candidate cells");
      top_.records_host.reserve(bytes);
      NBODY_CUDA_CHECK(cudaMemsetAsync(top_.words.data(), 0, sizeof(unsigned long long), q));
      find_top_cells<Real><<<gpu::blocks_for(cells, 256), 256, 0, q>>>(
          t, cells, reinterpret_cast<const parallel::KeySpan*>(top_.spans.data()), parts, me,
          reinterpret_cast<unsigned*>(top_.words.data()),
          reinterpret_cast<TopRecord<Real>*>(top_.records.data()), capacity);
      NBODY_CUDA_CHECK_LAUNCH("shared top tree: find_top_cells");
      // The count and the whole room in one copy: one wait (the room is a few hundred KB).
      NBODY_CUDA_CHECK(cudaMemcpyAsync(top_.words_host.data(), top_.words.data(),
                                       sizeof(unsigned long long), cudaMemcpyDeviceToHost, q));
      NBODY_CUDA_CHECK(cudaMemcpyAsync(top_.records_host.data(), top_.records.data(), bytes,
                                       cudaMemcpyDeviceToHost, q));
      NBODY_CUDA_CHECK(cudaStreamSynchronize(q));
      count = unsigned(top_.words_host.data()[0]);  // the low word: little-endian
      candidates = count;
      if (count <= capacity || count > parallel::kMaxTopCells) break;
      capacity = count + count / 4;
    }
    found.resize(count <= capacity ? count : 0);  // too many: given up below
    std::memcpy(found.data(), top_.records_host.data(), found.size() * sizeof(TopRecord<Real>));
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
    // Pinned and kept: the copy runs after the host has gone on (the last evaluation's copy
    // is waited for before its bytes are written over).
    const std::size_t bytes = updates.size() * sizeof(TopUpdate<Real>);
    make_event(top_.updates_copied);
    NBODY_CUDA_CHECK(cudaEventSynchronize(top_.updates_copied));
    top_.updates.reserve(bytes, "shared top tree: updates");
    top_.updates_host.reserve(bytes);
    std::memcpy(top_.updates_host.data(), updates.data(), bytes);
    NBODY_CUDA_CHECK(cudaMemcpyAsync(top_.updates.data(), top_.updates_host.data(), bytes,
                                     cudaMemcpyHostToDevice, s));
    NBODY_CUDA_CHECK(cudaEventRecord(top_.updates_copied, s));
    write_top_cells<Real><<<gpu::blocks_for(updates.size(), 256), 256, 0, s>>>(
        view(n_), reinterpret_cast<const TopUpdate<Real>*>(top_.updates.data()),
        unsigned(updates.size()), shared_.data());
    NBODY_CUDA_CHECK_LAUNCH("shared top tree: write_top_cells");
  }
  top_cells_shared_ = updates.size();
  return updates.size();
}

template void TreeForces<float>::launch_top_span(cudaStream_t);
template void TreeForces<double>::launch_top_span(cudaStream_t);
template std::size_t TreeForces<float>::share_top_cells(ForceReducer&, cudaStream_t, cudaStream_t);
template std::size_t TreeForces<double>::share_top_cells(ForceReducer&, cudaStream_t, cudaStream_t);

}  // namespace nbody::cuda_tree
