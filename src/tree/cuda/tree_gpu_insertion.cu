// The seeds' tree build (--tree-build insertion): Burtscher and Pingali's (2011) insertion
// of every body from the root with locks, as seeds 000, 001 and 003 describe it, then a
// layout pass (their "sort" kernel) into the arrays the Morton build fills, so that the
// moments, the walk groups and the walk are the same code (tree_gpu.cuh).
//
// Insertion: a thread per body descends from the root by its Morton key's digits (the
// Morton build's root cube and digits, so both builds give the same tree cell for cell).
// Inner slots are followed without locks (acquire loads). An empty slot, or one holding a
// leaf, is taken with atomicCAS to kSlotLocked (-2); the holder writes the new leaf, or
// appends the body to the leaf (<= kLeafSize bodies), or splits a full leaf into a new
// inner node whose children get its bodies by their next digit; then __threadfence() and
// the new value published with atomicExch, which releases the lock. Leaves at the maximum
// depth (key_bits levels: bodies closer than the root / 2^21) are never split and take any
// number of bodies, pushed without a lock (atomicExch on the list head).
//
// Never a hang: a thread holds a lock only inside one branch that writes, fences and
// unlocks, never waiting on anything meanwhile, so the holder always finishes whatever the
// other lanes of its warp do (independent thread scheduling, Volta and later) and whatever
// other blocks do. A thread that finds a slot locked does not spin on it: it keeps its place
// and tries again after the block's next barrier (__syncthreads_or, executed the same number
// of times by every thread of the block): seed 003's throttling, one lock attempt per thread
// per round. Pools of nodes that run out set a flag; the holder unlocks and gives up its
// body, every thread stops at its next step, and the host grows the pools and inserts again.
#include <cuda_runtime.h>
#include <cuda/atomic>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/launch.cuh"
#include "tree/cuda/tree_gpu.cuh"
#include "tree/cuda/tree_gpu_insertion.cuh"

namespace nbody::cuda_tree {

namespace {

constexpr int kThreads = 256;
constexpr int kLevelBlocks = 1024;

__device__ __forceinline__ int leaf_code(unsigned leaf) {
  return -int(leaf) - 3;
}
__device__ __forceinline__ unsigned leaf_index(int code) {
  return unsigned(-code - 3);
}

/// The slot's value, with acquire semantics: what its writer stored before publishing it
/// (a new node's slots, a leaf's list) is seen.
__device__ __forceinline__ int load_slot(int* slot) {
  return cuda::atomic_ref<int, cuda::thread_scope_device>(*slot).load(cuda::memory_order_acquire);
}

/// Publishes `value` in a slot this thread holds locked: its writes first, then the value.
__device__ __forceinline__ void publish(int* slot, int value) {
  __threadfence();
  atomicExch(slot, value);
}

/// The digit of a key below a cell of `level` (which child holds the body).
__device__ __forceinline__ unsigned digit_below(unsigned long long key, int level, int dim) {
  return unsigned(key >> (dim * (key_bits(dim) - level - 1))) & ((1u << dim) - 1u);
}

__global__ void init_insertion(InsertTree s, unsigned n) {
  for (int d = 0; d < 8; ++d) s.child[d] = kSlotEmpty;
  s.inner_count[0] = n;
  s.pool[0] = 1;  // the root
  s.pool[1] = 0;
  s.pool[2] = 0;
}

/// Splits full leaf `leaf` (held locked, below an inner node of level - 1) into a new inner
/// node of `level` whose children take its bodies by their next digit; the body about to go
/// on down through it is counted in. Returns the node, or -1 when a pool is out (nothing
/// changed).
__device__ int split_leaf(const InsertTree& s, unsigned leaf, int level, int dim) {
  volatile int* head = s.leaf_head;
  volatile int* next = s.next;
  volatile unsigned* count = s.leaf_count;
  const unsigned bodies = count[leaf];
  unsigned used = 0;  // the digits the bodies take
  int x = head[leaf];
  for (unsigned k = 0; k < bodies && x >= 0; ++k, x = next[x])
    used |= 1u << digit_below(s.keys[x], level, dim);
  const unsigned node = atomicAdd(&s.pool[0], 1u);
  const unsigned first = atomicAdd(&s.pool[1], unsigned(__popc(used)));
  if (node >= s.inner_capacity || first + unsigned(__popc(used)) > s.leaf_capacity) {
    atomicOr(&s.pool[2], node >= s.inner_capacity ? 1u : 2u);
    return -1;
  }
  int* ch = s.child + 8 * std::size_t(node);
  for (unsigned d = 0; d < 8; ++d) {
    const bool taken = (used >> d) & 1u;
    const unsigned l = first + unsigned(__popc(used & ((1u << d) - 1u)));
    ch[d] = taken ? leaf_code(l) : kSlotEmpty;
    if (taken) head[l] = -1, count[l] = 0;
  }
  s.inner_count[node] = bodies + 1;
  x = head[leaf];
  for (unsigned k = 0; k < bodies && x >= 0; ++k) {
    const int after = next[x];
    const unsigned l = leaf_index(ch[digit_below(s.keys[x], level, dim)]);
    next[x] = head[l];
    head[l] = x;
    count[l] = count[l] + 1;
    s.leaf_of[x] = l;
    x = after;
  }
  return int(node);
}

/// One step of body b from inner node `node` of `level`: down through inner nodes, then one
/// lock attempt. True when the body is placed (or given up on a pool overflow); false when
/// the slot is locked or the lock was missed (node and level keep the place reached).
__device__ bool insert_step(const InsertTree& s, unsigned b, unsigned long long key, int dim,
                            int& node, int& level) {
  const int bits = key_bits(dim);
  volatile int* head = s.leaf_head;
  volatile int* next = s.next;
  volatile unsigned* count = s.leaf_count;
  for (;;) {
    if (*(volatile unsigned*)&s.pool[2] != 0) return true;  // a pool is out: the build is redone
    int* slot = s.child + 8 * std::size_t(node) + digit_below(key, level, dim);
    const int v = load_slot(slot);
    if (v == kSlotLocked) return false;
    if (v >= 0) {  // an inner node: on down, counted in it
      atomicAdd(&s.inner_count[v], 1u);
      node = v;
      ++level;
      continue;
    }
    if (v == kSlotEmpty) {  // a new leaf of this body
      if (atomicCAS(slot, kSlotEmpty, kSlotLocked) != kSlotEmpty) return false;
      __threadfence();
      const unsigned l = atomicAdd(&s.pool[1], 1u);
      if (l >= s.leaf_capacity) {
        atomicOr(&s.pool[2], 2u);
        publish(slot, kSlotEmpty);
        return true;
      }
      next[b] = -1;
      head[l] = int(b);
      count[l] = 1;
      s.leaf_of[b] = l;
      publish(slot, leaf_code(l));
      return true;
    }
    const unsigned leaf = leaf_index(v);
    if (level + 1 >= bits) {  // a leaf at the maximum depth: never split, no lock
      s.leaf_of[b] = leaf;
      next[b] = atomicExch(&s.leaf_head[leaf], int(b));
      atomicAdd(&s.leaf_count[leaf], 1u);
      return true;
    }
    if (atomicCAS(slot, v, kSlotLocked) != v) return false;
    __threadfence();
    if (count[leaf] < kLeafSize) {  // room in the leaf
      next[b] = head[leaf];
      head[leaf] = int(b);
      count[leaf] = count[leaf] + 1;
      s.leaf_of[b] = leaf;
      publish(slot, v);
      return true;
    }
    const int split = split_leaf(s, leaf, level + 1, dim);
    publish(slot, split >= 0 ? split : v);
    if (split < 0) return true;
    node = split;  // the body goes on down from the new node (counted in it)
    ++level;
  }
}

__global__ void insert_bodies(InsertTree s, unsigned n, int dim) {
  const unsigned stride = gridDim.x * blockDim.x;
  for (unsigned base = blockIdx.x * blockDim.x; base < n; base += stride) {  // uniform per block
    const unsigned b = base + threadIdx.x;
    bool done = b >= n;
    const unsigned long long key = done ? 0ULL : s.keys[b];
    int node = 0, level = 0;
    // The throttle: one attempt per thread between two barriers of the whole block.
    while (__syncthreads_or(!done)) {
      if (!done) done = insert_step(s, b, key, dim, node, level);
    }
  }
}

// ---- Layout: the seeds' "sort" kernel, one launch per level (no ready flags) -------------

template <class Real>
__global__ void init_layout(TreeView<Real> t, InsertTree s) {
  double cx, cy, cz, half;
  root_cube(*t.bounds, t.dim, cx, cy, cz, half);
  t.box[0] = {Real(cx), Real(cy), Real(cz), Real(half)};
  t.link[0] = {-1, 0, 0u, t.n};
  s.cell_node[0] = t.n > kLeafSize ? 0 : -1;  // a root of <= kLeafSize bodies is a leaf
  t.counter[0] = 1;
  t.counter[1] = 0;
  t.level_start[0] = 0;
  t.level_start[1] = 1;
}

/// One level: each inner cell's non-empty children, in digit order, appended at the end of
/// the cell arrays (one atomicAdd), their body ranges from the subtree counts.
template <class Real>
__global__ void layout_level(TreeView<Real> t, InsertTree s, int level) {
  // Once a level has run out of cell slots, the slots reserved past the end were never
  // written: their cell_node is stale (another build's node, or never set), and following
  // it reads outside the pools (a fuzzed sweep of builds on the H100 hit exactly this). The
  // host lays the tree out again with more room; until then nothing more is read (every
  // block still takes its ticket below, which resets the level's count for that next pass).
  const bool out_of_room = *static_cast<volatile unsigned*>(&t.counter[1]) != 0;
  const int dim = t.dim;
  const unsigned lb = t.level_start[level], le = out_of_room ? lb : t.level_start[level + 1];
  const unsigned children = 1u << dim;
  for (unsigned c = lb + blockIdx.x * blockDim.x + threadIdx.x; c < le;
       c += gridDim.x * blockDim.x) {
    const int node = s.cell_node[c];
    if (node < 0) continue;  // a leaf
    const int* ch = s.child + 8 * std::size_t(node);
    unsigned used = 0;
    for (unsigned d = 0; d < children; ++d) used += ch[d] != kSlotEmpty ? 1u : 0u;
    const unsigned base = atomicAdd(&t.counter[0], used);
    if (base + used > t.capacity) {
      atomicOr(&t.counter[1], 1u);  // out of cell slots: the host grows and lays out again
      continue;
    }
    const Vec4<Real> p = t.box[c];
    const Real h = p.w * Real(0.5);
    unsigned begin = t.link[c].begin, slot = base;
    for (unsigned d = 0; d < children; ++d) {
      const int v = ch[d];
      if (v == kSlotEmpty) continue;
      const unsigned count = v >= 0 ? s.inner_count[v] : s.leaf_count[leaf_index(v)];
      t.link[slot] = {-1, 0, begin, begin + count};
      t.box[slot] = {p.x + ((d & 1u) ? h : -h), p.y + ((d & 2u) ? h : -h),
                     dim == 2 ? Real(0) : p.z + ((d & 4u) ? h : -h), h};
      s.cell_node[slot] = v;
      if (v < 0) s.leaf_cell[leaf_index(v)] = slot;
      begin += count;
      ++slot;
    }
    t.link[c].first_child = int(base);
    t.link[c].child_count = int(used);
  }
  finish_level(t, level);
}

/// Each body's tree position: its leaf cell's first plus its rank there by (key, index), the
/// order of the Morton build's stable sort. In a leaf of the maximum depth holding more than
/// kLeafSize bodies (all with one key) the rank is taken by an atomic instead: those bodies
/// lie within root / 2^21 of each other, in an order that may change run to run.
template <class Real>
__global__ void place_bodies(TreeView<Real> t, InsertTree s) {
  const unsigned b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= t.n) return;
  const unsigned long long key = s.keys[b];
  auto before = [&](unsigned x) { return s.keys[x] < key || (s.keys[x] == key && x < b); };
  unsigned pos = 0;
  if (t.n <= kLeafSize) {  // the root is the one leaf
    for (unsigned x = 0; x < t.n; ++x) pos += before(x) ? 1u : 0u;
  } else {
    const unsigned leaf = s.leaf_of[b];
    const CellLink lk = t.link[s.leaf_cell[leaf]];
    pos = lk.begin;
    if (lk.end - lk.begin <= kLeafSize) {
      int x = s.leaf_head[leaf];
      for (unsigned k = 0; k < kLeafSize && x >= 0; ++k, x = s.next[x])
        pos += before(unsigned(x)) ? 1u : 0u;
    } else {
      pos += atomicSub(&s.leaf_count[leaf], 1u) - 1u;
    }
  }
  Vec4<Real> body = t.bodies[b];
  if (t.dim == 2) body.z = Real(0);
  t.sorted[pos] = body;
  t.order[pos] = b;
  t.keys[pos] = key;
}

}  // namespace

void launch_insertion(const InsertTree& s, unsigned n, int dim, cudaStream_t stream) {
  init_insertion<<<1, 1, 0, stream>>>(s, n);
  NBODY_CUDA_CHECK_LAUNCH("tree init_insertion");
  if (n == 0) return;
  insert_bodies<<<gpu::blocks_for(n, kThreads), kThreads, 0, stream>>>(s, n, dim);
  NBODY_CUDA_CHECK_LAUNCH("tree insert_bodies");
}

template <class Real>
void launch_layout(const TreeView<Real>& t, const InsertTree& s, cudaStream_t stream) {
  init_layout<Real><<<1, 1, 0, stream>>>(t, s);
  NBODY_CUDA_CHECK_LAUNCH("tree init_layout");
  for (int level = 0; level < key_bits(t.dim); ++level) {
    layout_level<Real><<<kLevelBlocks, kThreads, 0, stream>>>(t, s, level);
    NBODY_CUDA_CHECK_LAUNCH("tree layout_level");
  }
}

template <class Real>
void launch_place(const TreeView<Real>& t, const InsertTree& s, cudaStream_t stream) {
  place_bodies<Real><<<gpu::blocks_for(t.n, kThreads), kThreads, 0, stream>>>(t, s);
  NBODY_CUDA_CHECK_LAUNCH("tree place_bodies");
}

#define NBODY_TREE_INSERTION(Real)                                                           \
  template void launch_layout<Real>(const TreeView<Real>&, const InsertTree&, cudaStream_t); \
  template void launch_place<Real>(const TreeView<Real>&, const InsertTree&, cudaStream_t);
NBODY_TREE_INSERTION(float)
NBODY_TREE_INSERTION(double)
#undef NBODY_TREE_INSERTION

}  // namespace nbody::cuda_tree
