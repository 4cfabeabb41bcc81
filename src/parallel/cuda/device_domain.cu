// DeviceDomain (device_domain.cuh): keys, cuts and migration of a GPU rank's bodies.
#include <cuda_runtime.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_select.cuh>

#include <algorithm>
#include <cfloat>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/launch.cuh"
#include "core/morton.hpp"
#include "nbody/error.hpp"
#include "parallel/cuda/device_domain.cuh"
#include "tree/tree.hpp"

namespace nbody::parallel {

namespace {

constexpr int kRecord = kMigratedDoubles + 2;  // doubles, id, work: 104 bytes a body

/// Raw pointers of DeviceBodies for the kernels.
struct Fields {
  double* d[kMigratedDoubles];
  std::uint64_t* id;
  float* work;
};

Fields fields(const DeviceBodies& b) {
  Fields f{};
  for (int k = 0; k < kMigratedDoubles; ++k) f.d[k] = b.doubles[std::size_t(k)]->data();
  f.id = b.id->data();
  f.work = b.work ? b.work->data() : nullptr;
  return f;
}

struct Box6 {
  double lo[3], hi[3];
};
struct PointBox {
  const double *x, *y, *z;
  int dim;
  __host__ __device__ Box6 operator()(unsigned i) const {
    const double zz = dim == 2 ? 0.0 : z[i];
    return {{x[i], y[i], zz}, {x[i], y[i], zz}};
  }
};
struct MergeBox {
  __host__ __device__ Box6 operator()(const Box6& a, const Box6& b) const {
    Box6 r;
    for (int k = 0; k < 3; ++k) {
      r.lo[k] = fmin(a.lo[k], b.lo[k]);
      r.hi[k] = fmax(a.hi[k], b.hi[k]);
    }
    return r;
  }
};

/// The grid cell of coordinate v along one axis (clamped: bodies outside the cube, and
/// non-finite ones, still get a cell).
__device__ inline std::uint64_t grid(double v, double lo, double scale, std::uint64_t cells) {
  const double g = (v - lo) * scale;
  if (!(g > 0)) return 0;
  return g >= double(cells) ? cells - 1 : std::uint64_t(g);
}

__global__ void key_kernel(const double* x, const double* y, const double* z, unsigned n, int dim,
                           double cx, double cy, double cz, double half, std::uint64_t* keys) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int bits = dim == 2 ? 31 : 21;
  const std::uint64_t cells = std::uint64_t(1) << bits;
  const double scale = double(cells) / (2 * half);
  const std::uint64_t ix = grid(x[i], cx - half, scale, cells);
  const std::uint64_t iy = grid(y[i], cy - half, scale, cells);
  // x the most significant bit of each digit, then y, then z (core/morton.hpp's spreading).
  const std::uint64_t iz = dim == 2 ? 0 : grid(z[i], cz - half, scale, cells);
  keys[i] = dim == 2 ? spread(ix, 2) << 1 | spread(iy, 2)
                     : spread(ix, 3) << 2 | spread(iy, 3) << 1 | spread(iz, 3);
}

/// Each body's owner (the last piece whose first key is <= its key), leavers flagged and
/// counted per destination.
__global__ void dest_kernel(const std::uint64_t* keys, unsigned n, const std::uint64_t* first,
                            unsigned parts, unsigned me, unsigned* dest, unsigned char* flags,
                            unsigned* counts) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const std::uint64_t k = keys[i];
  unsigned lo = 0, hi = parts;  // first[lo] <= k < first[hi]
  while (hi - lo > 1) {
    const unsigned mid = (lo + hi) / 2;
    if (first[mid] <= k) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  dest[i] = lo;
  flags[i] = lo != me;
  if (lo != me) atomicAdd(&counts[lo], 1u);
}

__global__ void gather_dest(const unsigned* leaving, const unsigned* dest, unsigned count,
                            unsigned* out) {
  const unsigned k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < count) out[k] = dest[leaving[k]];
}

__global__ void pack_kernel(Fields f, const unsigned* order, unsigned count, double* send) {
  const unsigned k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= count) return;
  const unsigned i = order[k];
  double* r = send + std::size_t(k) * kRecord;
  for (int c = 0; c < kMigratedDoubles; ++c) r[c] = f.d[c][i];
  r[kMigratedDoubles] = __longlong_as_double((long long)f.id[i]);
  r[kMigratedDoubles + 1] = f.work ? double(f.work[i]) : 0.0;
}

/// Arrival k into the k-th hole while holes last, then after the last body.
__global__ void unpack_kernel(Fields f, const double* recv, unsigned count, const unsigned* holes,
                              unsigned n_holes, unsigned n_old) {
  const unsigned k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= count) return;
  const unsigned i = k < n_holes ? holes[k] : n_old + (k - n_holes);
  const double* r = recv + std::size_t(k) * kRecord;
  for (int c = 0; c < kMigratedDoubles; ++c) f.d[c][i] = r[c];
  f.id[i] = std::uint64_t(__double_as_longlong(r[kMigratedDoubles]));
  if (f.work) f.work[i] = float(r[kMigratedDoubles + 1]);
}

/// The holes left over (holes[first_hole + k]) filled by the bodies that stay from the end
/// of the old range (tail[k], *count of them).
__global__ void fill_kernel(Fields f, const unsigned* holes, unsigned first_hole,
                            const unsigned* tail, const unsigned* count, unsigned most) {
  const unsigned k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= most || k >= *count) return;
  const unsigned to = holes[first_hole + k], from = tail[k];
  for (int c = 0; c < kMigratedDoubles; ++c) f.d[c][to] = f.d[c][from];
  f.id[to] = f.id[from];
  if (f.work) f.work[to] = f.work[from];
}

struct Stays {
  const unsigned char* flags;
  __host__ __device__ bool operator()(unsigned i) const { return flags[i] == 0; }
};

#ifndef NDEBUG
__global__ void census_kernel(const std::uint64_t* id, unsigned n, unsigned long long* out) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  atomicAdd(&out[0], (unsigned long long)id[i]);
  atomicXor(&out[1], (unsigned long long)id[i]);
}
#endif

/// Room for n items and a little more: counts change by a few each step, and a reserve()
/// that grows reallocates (a device synchronisation and a large cudaMalloc every step).
std::size_t roomy(std::size_t n) {
  return n + n / 16 + 1024;
}

unsigned blocks(std::size_t n) {
  return unsigned(std::max<std::size_t>((n + 255) / 256, 1));
}

}  // namespace

DeviceDomain::DeviceDomain(std::shared_ptr<ForceReducer> comm, int dim, DomainOptions options)
    : comm_(std::move(comm)), dim_(dim), options_(options), cuts_(whole_line(comm_->parts())) {
  const std::size_t parts = std::size_t(comm_->parts());
  first_.reserve(parts + 1, "domain cuts");
  counts_.reserve(parts + 2, "migration counts");
  counts_host_.reserve(parts + 2);
  bounds_.reserve(6, "domain bounds");
  bounds_host_.reserve(6);
  census_.reserve(2, "ownership census");
  census_host_.reserve(2);
}

DeviceDomain::~DeviceDomain() = default;

void DeviceDomain::scratch(std::size_t bytes) {
  if (bytes > temp_bytes_) {
    temp_.reserve(bytes, "domain scratch");
    temp_bytes_ = bytes;
  }
}

void DeviceDomain::compute_keys(const DeviceBodies& b, std::size_t n, cudaStream_t stream) {
  if (n > keys_.capacity()) keys_.reserve(roomy(n), "domain keys");
  if (n == 0) return;
  key_kernel<<<blocks(n), 256, 0, stream>>>(b.doubles[0]->data(), b.doubles[1]->data(),
                                            b.doubles[2]->data(), unsigned(n), dim_, cube_.cx,
                                            cube_.cy, cube_.cz, cube_.half, keys_.data());
  NBODY_CUDA_CHECK_LAUNCH("key_kernel");
}

bool DeviceDomain::global_bounds(const DeviceBodies& b, std::size_t n, double (&lo)[3],
                                 double (&hi)[3], cudaStream_t stream) {
  double box[7] = {0, 0, 0, 0, 0, 0, n > 0 ? 1.0 : 0.0};
  if (n > 0) {
    const auto in = thrust::make_transform_iterator(
        thrust::counting_iterator<unsigned>(0),
        PointBox{b.doubles[0]->data(), b.doubles[1]->data(), b.doubles[2]->data(), dim_});
    const Box6 empty{{DBL_MAX, DBL_MAX, DBL_MAX}, {-DBL_MAX, -DBL_MAX, -DBL_MAX}};
    auto* out = reinterpret_cast<Box6*>(bounds_.data());
    std::size_t bytes = 0;
    NBODY_CUDA_CHECK(cub::DeviceReduce::Reduce(nullptr, bytes, in, out, (long long)n, MergeBox{},
                                               empty, stream));
    scratch(bytes);
    NBODY_CUDA_CHECK(cub::DeviceReduce::Reduce(temp_.data(), bytes, in, out, (long long)n,
                                               MergeBox{}, empty, stream));
    NBODY_CUDA_CHECK(cudaMemcpyAsync(bounds_host_.data(), bounds_.data(), 6 * sizeof(double),
                                     cudaMemcpyDeviceToHost, stream));
    NBODY_CUDA_CHECK(cudaStreamSynchronize(stream));
    std::memcpy(box, bounds_host_.data(), 6 * sizeof(double));
  }
  ForceReducer::Bytes mine(sizeof box);
  std::memcpy(mine.data(), box, sizeof box);
  bool any = false;
  for (const auto& bytes : comm_->all_gather(mine)) {
    if (bytes.size() != sizeof box)
      throw Error("domain decomposition: a rank sent a malformed box");
    double r[7];
    std::memcpy(r, bytes.data(), sizeof r);
    if (r[6] == 0) continue;
    for (int k = 0; k < 3; ++k) {
      lo[k] = any ? std::min(lo[k], r[k]) : r[k];
      hi[k] = any ? std::max(hi[k], r[3 + k]) : r[3 + k];
    }
    any = true;
  }
  return any;
}

void DeviceDomain::root_box(double (&lo)[3], double (&hi)[3]) const {
  for (int k = 0; k < 3; ++k) lo[k] = box_lo_[k], hi[k] = box_hi_[k];
}

double DeviceDomain::misalignment() const {
  const tree::RootCube c = tree::root_cube_from_bounds(box_lo_, box_hi_);
  const double moved = std::max({std::abs(c.x - cube_.cx), std::abs(c.y - cube_.cy),
                                 std::abs(c.z - cube_.cz), std::abs(c.half - cube_.half)});
  return cube_.half > 0 ? moved / cube_.half : 0.0;
}

void DeviceDomain::cut(const DeviceBodies& b, std::size_t n, const double (&lo)[3],
                       const double (&hi)[3], double seconds_per_interaction, cudaStream_t stream) {
  // The keys' cube: the trees' root cube of this step (tree::root_cube_from_bounds, the
  // GPU tree's root_cube), so the cuts fall on the cells of this step's global tree.
  const tree::RootCube c = tree::root_cube_from_bounds(lo, hi);
  cube_ = {c.x, c.y, c.z, c.half};
  compute_keys(b, n, stream);
  // The keys and the last walk's work per body to the host, the histograms all-reduced.
  std::vector<std::uint64_t> keys(n);
  const bool weighed = b.work && seconds_per_interaction > 0;
  std::vector<float> work(weighed ? n : 0);
  if (n > 0) {
    NBODY_CUDA_CHECK(cudaMemcpyAsync(keys.data(), keys_.data(), n * sizeof(std::uint64_t),
                                     cudaMemcpyDeviceToHost, stream));
    if (weighed)
      NBODY_CUDA_CHECK(cudaMemcpyAsync(work.data(), b.work->data(), n * sizeof(float),
                                       cudaMemcpyDeviceToHost, stream));
    NBODY_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  // Every rank weighs its bodies the same way when none measured yet (one per body).
  const bool all_weighed = comm_->max(weighed ? 0 : 1) == 0;
  std::vector<double> cost;
  if (all_weighed) {
    cost.resize(n);
    const double scale = 1e6 * seconds_per_interaction;  // microseconds: well above 0
    for (std::size_t i = 0; i < n; ++i)
      cost[i] = (std::isfinite(work[i]) && work[i] >= 1.0f ? double(work[i]) : 1.0) * scale;
  }
  cuts_ = balance(keys, cost, dim_, *comm_, options_.balance);
  NBODY_CUDA_CHECK(cudaMemcpyAsync(first_.data(), cuts_.first.data(),
                                   cuts_.first.size() * sizeof(std::uint64_t),
                                   cudaMemcpyHostToDevice, stream));
  have_cut_ = true;
}

void DeviceDomain::update(const DeviceBodies& b, std::size_t& n, Work work, cudaStream_t stream) {
  stats_ = {};
  // The measured imbalance of the last evaluation: its force time under the cut it met.
  double mine = work.seconds;
  ForceReducer::Bytes bytes(sizeof mine);
  std::memcpy(bytes.data(), &mine, sizeof mine);
  double most = 0, total = 0;
  int parts = 0;
  bool measured = true;
  for (const auto& w : comm_->all_gather(bytes)) {
    double v = 0;
    if (w.size() == sizeof v) std::memcpy(&v, w.data(), sizeof v);
    measured = measured && v >= 0;
    most = std::max(most, v);
    total += v;
    ++parts;
  }
  stats_.imbalance = measured && total > 0 ? most / (total / parts) : 1.0;
  // This step's root box: every rank's bodies' bounds (one process's tree has these cells).
  double lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
  (void)global_bounds(b, n, lo, hi, stream);
  for (int k = 0; k < 3; ++k) box_lo_[k] = lo[k], box_hi_[k] = hi[k];
  ++since_cut_;
  // A new cut when the grid has moved under the cuts (a cut then splits the cells along it,
  // whose halves' monopoles are lopsided: tree_gpu_essential.cu's test measures it), or when
  // the time is out of balance (at most every kRecutEvery evaluations: time is noisy, and a
  // cut moves bodies and changes the essential trees, which moves the time again).
  constexpr int kRecutEvery = 16;
  constexpr double kMisalignment = 1e-4;
  // The first cuts weigh bodies by count, then by measured time: the first few re-cuts
  // are not held back.
  const bool settled = cuts_made_ >= 3;
  if (!have_cut_ || misalignment() > kMisalignment ||
      (stats_.imbalance > options_.recut_imbalance && (!settled || since_cut_ >= kRecutEvery))) {
    since_cut_ = 0;
    ++cuts_made_;
    const double per = measured && work.interactions > 0 ? work.seconds / work.interactions : 0;
    cut(b, n, lo, hi, per, stream);
    stats_.recut = true;
  } else {
    compute_keys(b, n, stream);
  }
  migrate(b, n, stream);
  stats_.bodies = n;
}

void DeviceDomain::migrate(const DeviceBodies& b, std::size_t& n, cudaStream_t stream) {
  const unsigned parts = unsigned(comm_->parts()), me = unsigned(comm_->part());
#ifndef NDEBUG
  auto census = [&](std::size_t count) {
    NBODY_CUDA_CHECK(cudaMemsetAsync(census_.data(), 0, 2 * sizeof(unsigned long long), stream));
    if (count > 0)
      census_kernel<<<blocks(count), 256, 0, stream>>>(b.id->data(), unsigned(count),
                                                       census_.data());
    NBODY_CUDA_CHECK(cudaMemcpyAsync(census_host_.data(), census_.data(),
                                     2 * sizeof(unsigned long long), cudaMemcpyDeviceToHost,
                                     stream));
    NBODY_CUDA_CHECK(cudaStreamSynchronize(stream));
    const unsigned long long mine[3] = {count, census_host_.data()[0], census_host_.data()[1]};
    ForceReducer::Bytes out(sizeof mine);
    std::memcpy(out.data(), mine, sizeof mine);
    Census c;
    for (const auto& r : comm_->all_gather(out)) {
      unsigned long long v[3];
      std::memcpy(v, r.data(), sizeof v);
      c.count += v[0], c.id_sum += v[1], c.id_xor ^= v[2];
    }
    return c;
  };
  const Census before = census(n);
#endif
  const std::size_t cap = std::max<std::size_t>(n, 1);
  if (cap > dest_.capacity()) {
    dest_.reserve(roomy(cap), "domain owners");
    flags_.reserve(roomy(cap), "domain leavers");
    leaving_.reserve(roomy(cap), "domain leavers");
  }
  NBODY_CUDA_CHECK(cudaMemsetAsync(counts_.data(), 0, (parts + 2) * sizeof(unsigned), stream));
  if (n > 0) {
    dest_kernel<<<blocks(n), 256, 0, stream>>>(keys_.data(), unsigned(n), first_.data(), parts, me,
                                               dest_.data(), flags_.data(), counts_.data());
    NBODY_CUDA_CHECK_LAUNCH("dest_kernel");
    std::size_t bytes = 0;
    const thrust::counting_iterator<unsigned> index{0u};
    NBODY_CUDA_CHECK(cub::DeviceSelect::Flagged(nullptr, bytes, index, flags_.data(),
                                                leaving_.data(), counts_.data() + parts,
                                                (long long)n, stream));
    scratch(bytes);
    NBODY_CUDA_CHECK(cub::DeviceSelect::Flagged(temp_.data(), bytes, index, flags_.data(),
                                                leaving_.data(), counts_.data() + parts,
                                                (long long)n, stream));
  }
  NBODY_CUDA_CHECK(cudaMemcpyAsync(counts_host_.data(), counts_.data(),
                                   (parts + 1) * sizeof(unsigned), cudaMemcpyDeviceToHost, stream));
  NBODY_CUDA_CHECK(cudaStreamSynchronize(stream));
  const unsigned leaving = counts_host_.data()[parts];
  // Who sends how many to whom: one small host exchange.
  std::vector<ForceReducer::Bytes> announce(parts);
  for (unsigned p = 0; p < parts; ++p) {
    const unsigned long long c = counts_host_.data()[p];
    announce[p].resize(sizeof c);
    std::memcpy(announce[p].data(), &c, sizeof c);
  }
  const auto heard = comm_->exchange(announce);
  std::vector<std::size_t> send_count(parts), recv_count(parts);
  std::size_t arriving = 0;
  for (unsigned p = 0; p < parts; ++p) {
    unsigned long long c = 0;
    if (heard[p].size() != sizeof c) throw Error("migration: a rank sent a malformed count");
    std::memcpy(&c, heard[p].data(), sizeof c);
    recv_count[p] = p == me ? 0 : std::size_t(c);
    send_count[p] = p == me ? 0 : counts_host_.data()[p];
    arriving += recv_count[p];
  }
  // Leavers grouped by destination (stable: each group in body order), packed.
  const std::size_t record = kRecord * sizeof(double);
  if (std::size_t(leaving) * kRecord > send_.capacity())
    send_.reserve(roomy(leaving) * kRecord, "migrating bodies");
  if (arriving * kRecord > recv_.capacity())
    recv_.reserve(roomy(arriving) * kRecord, "arriving bodies");
  if (leaving > 0) {
    if (2 * std::size_t(leaving) > dest_sorted_.capacity()) {
      dest_sorted_.reserve(2 * roomy(leaving), "leavers' owners");
      sorted_leaving_.reserve(roomy(leaving), "leavers by owner");
    }
    unsigned* dest_of = dest_sorted_.data();
    unsigned* dest_out = dest_sorted_.data() + leaving;
    gather_dest<<<blocks(leaving), 256, 0, stream>>>(leaving_.data(), dest_.data(), leaving,
                                                     dest_of);
    NBODY_CUDA_CHECK_LAUNCH("gather_dest");
    int bits = 1;
    while ((1u << bits) < parts) ++bits;
    std::size_t bytes = 0;
    NBODY_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, dest_of, dest_out,
                                                     leaving_.data(), sorted_leaving_.data(),
                                                     (long long)leaving, 0, bits, stream));
    scratch(bytes);
    NBODY_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp_.data(), bytes, dest_of, dest_out,
                                                     leaving_.data(), sorted_leaving_.data(),
                                                     (long long)leaving, 0, bits, stream));
    pack_kernel<<<blocks(leaving), 256, 0, stream>>>(fields(b), sorted_leaving_.data(), leaving,
                                                     send_.data());
    NBODY_CUDA_CHECK_LAUNCH("pack_kernel");
  }
  std::vector<const void*> send(parts);
  std::vector<void*> recv(parts);
  std::vector<std::size_t> send_bytes(parts), recv_bytes(parts);
  std::size_t out_at = 0, in_at = 0;
  for (unsigned p = 0; p < parts; ++p) {
    send[p] = send_.data() + out_at * kRecord;
    recv[p] = recv_.data() + in_at * kRecord;
    send_bytes[p] = send_count[p] * record;
    recv_bytes[p] = recv_count[p] * record;
    out_at += send_count[p];
    in_at += recv_count[p];
  }
  comm_->exchange_device(send, send_bytes, recv, recv_bytes, stream);
  // Room for the arrivals (the old contents kept), then arrivals into the holes.
  const std::size_t n_new = n - leaving + arriving;
  if (n_new > b.id->capacity()) {
    const std::size_t grown = roomy(n_new);
    NBODY_CUDA_CHECK(cudaStreamSynchronize(stream));
    for (auto* d : b.doubles) d->grow_keeping(grown, n, "state (arrivals)");
    b.id->grow_keeping(grown, n, "state (arrivals)");
    if (b.work) b.work->grow_keeping(grown, n, "work (arrivals)");
  }
  if (arriving > 0) {
    unpack_kernel<<<blocks(arriving), 256, 0, stream>>>(fields(b), recv_.data(), unsigned(arriving),
                                                        leaving_.data(), leaving, unsigned(n));
    NBODY_CUDA_CHECK_LAUNCH("unpack_kernel");
  }
  if (arriving < leaving) {  // holes left: filled from the end of the old range
    const std::size_t tail = n - n_new;
    if (tail > tail_.capacity()) tail_.reserve(roomy(tail), "domain tail");
    std::size_t bytes = 0;
    const thrust::counting_iterator<unsigned> index{unsigned(n_new)};
    NBODY_CUDA_CHECK(cub::DeviceSelect::If(nullptr, bytes, index, tail_.data(),
                                           counts_.data() + parts + 1, (long long)tail,
                                           Stays{flags_.data()}, stream));
    scratch(bytes);
    NBODY_CUDA_CHECK(cub::DeviceSelect::If(temp_.data(), bytes, index, tail_.data(),
                                           counts_.data() + parts + 1, (long long)tail,
                                           Stays{flags_.data()}, stream));
    fill_kernel<<<blocks(tail), 256, 0, stream>>>(fields(b), leaving_.data(), unsigned(arriving),
                                                  tail_.data(), counts_.data() + parts + 1,
                                                  unsigned(tail));
    NBODY_CUDA_CHECK_LAUNCH("fill_kernel");
  }
  n = n_new;
  // The first migration of a run moves about half of every rank's bodies (the start is
  // shared out by index, not by place); later ones a few. Its buffers are given back rather
  // than held for the rest of the run (measured: 4 GB a rank at 32M bodies).
  const std::size_t now = std::max<std::size_t>(leaving, arriving);
  const std::size_t held = std::max(send_.capacity(), recv_.capacity());
  if (held > std::size_t(64) << 20 && held > 4 * roomy(now) * kRecord) {
    NBODY_CUDA_CHECK(cudaStreamSynchronize(stream));
    for (auto* buffer : {&send_, &recv_}) buffer->release();
    for (auto* buffer : {&dest_sorted_, &sorted_leaving_, &tail_}) buffer->release();
  }
  stats_.migration.sent = leaving;
  stats_.migration.received = arriving;
  stats_.migration.bytes_sent = std::size_t(leaving) * record;
#ifndef NDEBUG
  check_census(before, census(n), "GPU migration");
#endif
}

}  // namespace nbody::parallel
