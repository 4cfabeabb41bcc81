// DeviceDomain (device_domain.cuh): the bounds, keys and cuts of a GPU rank's bodies; the
// migration is device_migration.cu.
#include <cuda_runtime.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <cub/device/device_reduce.cuh>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/launch.cuh"
#include "core/cuda/merge_boxes.cuh"
#include "core/morton.hpp"
#include "nbody/error.hpp"
#include "parallel/cuda/device_domain.cuh"
#include "parallel/cuda/device_domain_detail.cuh"
#include "tree/tree.hpp"

namespace nbody::parallel {

namespace {

using domain_detail::blocks;
using domain_detail::roomy;

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
using MergeBox = gpu::MergeBoxes<Box6>;

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

std::vector<std::pair<std::string, double>> DeviceDomain::take_phase_ms() {
  if (!std::exchange(timed_, false)) return {};
  const char* names[3] = {"bounds", "keys", "migrate"};
  std::vector<std::pair<std::string, double>> out;
  for (std::size_t k = 0; k < 3; ++k) out.emplace_back(names[k], phase_.ms(k, k + 1));
  return out;
}

void DeviceDomain::scratch(std::size_t bytes) {
  if (bytes > temp_bytes_) {
    temp_.reserve(bytes, "domain scratch");
    temp_bytes_ = bytes;
  }
}

void DeviceDomain::compute_keys(const DeviceBodies& b, std::size_t n, cudaStream_t stream) {
  if (b.key_room != nullptr && n <= b.key_room_capacity) {
    keys_ = b.key_room;
    own_keys_.release();  // the first update's, before the tree had room
  } else {
    if (n > own_keys_.capacity()) own_keys_.reserve(roomy(n), "domain keys");
    keys_ = own_keys_.data();
  }
  if (n == 0) return;
  key_kernel<<<blocks(n), 256, 0, stream>>>(b.doubles[0]->data(), b.doubles[1]->data(),
                                            b.doubles[2]->data(), unsigned(n), dim_, cube_.cx,
                                            cube_.cy, cube_.cz, cube_.half, keys_);
  NBODY_CUDA_CHECK_LAUNCH("key_kernel");
}

bool DeviceDomain::global_bounds(const DeviceBodies& b, std::size_t n, double (&lo)[3],
                                 double (&hi)[3], cudaStream_t stream) {
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
    std::memcpy(lo, bounds_host_.data(), 3 * sizeof(double));
    std::memcpy(hi, bounds_host_.data() + 3, 3 * sizeof(double));
  }
  return union_of_boxes(*comm_, n > 0, lo, hi);  // domain.hpp, as the CPU ranks' cube
}

void DeviceDomain::refresh_root_box(const DeviceBodies& b, std::size_t n, cudaStream_t stream) {
  double lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
  (void)global_bounds(b, n, lo, hi, stream);
  for (int k = 0; k < 3; ++k) box_lo_[k] = lo[k], box_hi_[k] = hi[k];
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
  // Every rank weighs its bodies the same way: by the last walk's work times its seconds per
  // interaction (microseconds: well above 0) when all have measured, else one per body.
  const bool weighed = b.work && seconds_per_interaction > 0;
  const bool all_weighed = comm_->max(weighed ? 0 : 1) == 0;
  cuts_ = domain_detail::balance_on_device(keys_, all_weighed ? b.work->data() : nullptr, n,
                                           all_weighed ? 1e6 * seconds_per_interaction : 0.0, dim_,
                                           *comm_, options_.balance, cut_scratch_, stream);
  NBODY_CUDA_CHECK(cudaMemcpyAsync(first_.data(), cuts_.first.data(),
                                   cuts_.first.size() * sizeof(std::uint64_t),
                                   cudaMemcpyHostToDevice, stream));
  have_cut_ = true;
}

void DeviceDomain::update(const DeviceBodies& b, std::size_t& n, Work work, cudaStream_t stream) {
  stats_ = {};
  phase_.mark(0, stream);
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
  phase_.mark(1, stream);
  ++since_cut_;
  // A new cut when the grid has moved under the cuts (a cut then splits the cells along it,
  // whose halves' monopoles are lopsided: tree_gpu_essential.cu's test measures it), or when
  // the time is out of balance (at most every kRecutEvery evaluations: time is noisy, and a
  // cut moves bodies and changes the essential trees, which moves the time again).
  constexpr int kRecutEvery = 16;
  constexpr double kMisalignment = 1e-4;
  // The first cuts weigh bodies by count, then by measured time: the first few re-cuts are
  // not held back, and they are made from DomainOptions::settling_imbalance (the GPU ranks:
  // 3 %, cuda/domain_forces.cuh) when that is tighter. A cut's histograms are summed on the
  // device (device_cuts.cu): when the keys and costs went to the host, a cut took ~370 ms at
  // 64M bodies on 2 H200s.
  const bool settled = cuts_made_ >= 3;
  const double tolerance = settled || options_.settling_imbalance <= 0
                               ? options_.recut_imbalance
                               : std::min(options_.recut_imbalance, options_.settling_imbalance);
  if (!have_cut_ || misalignment() > kMisalignment ||
      (stats_.imbalance > tolerance && (!settled || since_cut_ >= kRecutEvery))) {
    since_cut_ = 0;
    ++cuts_made_;
    const double per = measured && work.interactions > 0 ? work.seconds / work.interactions : 0;
    cut(b, n, lo, hi, per, stream);
    stats_.recut = true;
  } else {
    compute_keys(b, n, stream);
  }
  phase_.mark(2, stream);
  migrate(b, n, stream);
  phase_.mark(3, stream);
  timed_ = true;
  stats_.bodies = n;
}

}  // namespace nbody::parallel
