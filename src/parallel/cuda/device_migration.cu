// DeviceDomain::migrate (device_domain.cuh): every body to the rank that owns its key. The
// leavers are compacted and sorted by destination, packed into records and sent by NCCL;
// arrivals fill the leavers' holes and bodies from the end fill the rest.
#include <cuda_runtime.h>
#include <thrust/iterator/counting_iterator.h>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/launch.cuh"
#include "nbody/error.hpp"
#include "parallel/cuda/device_domain.cuh"
#include "parallel/cuda/device_domain_detail.cuh"

namespace nbody::parallel {

namespace {

using domain_detail::blocks;
using domain_detail::Fields;
using domain_detail::kRecord;
using domain_detail::roomy;

/// The owner of key k: the last piece whose first key is <= k.
__device__ unsigned owner(std::uint64_t k, const std::uint64_t* first, unsigned parts) {
  unsigned lo = 0, hi = parts;  // first[lo] <= k < first[hi]
  while (hi - lo > 1) {
    const unsigned mid = (lo + hi) / 2;
    if (first[mid] <= k) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo;
}

/// Leavers flagged and counted per destination.
__global__ void dest_kernel(const std::uint64_t* keys, unsigned n, const std::uint64_t* first,
                            unsigned parts, unsigned me, unsigned char* flags, unsigned* counts) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const unsigned p = owner(keys[i], first, parts);
  flags[i] = p != me;
  if (p != me) atomicAdd(&counts[p], 1u);
}

/// The leavers' owners, found again from their keys (no array of n owners kept).
__global__ void gather_dest(const unsigned* leaving, const std::uint64_t* keys, unsigned count,
                            const std::uint64_t* first, unsigned parts, unsigned* out) {
  const unsigned k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < count) out[k] = owner(keys[leaving[k]], first, parts);
}

__global__ void pack_kernel(Fields f, const unsigned* order, unsigned count, double* send) {
  const unsigned k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= count) return;
  const unsigned i = order[k];
  double* r = send + std::size_t(k) * kRecord;
  for (int c = 0; c < kMigratedDoubles; ++c) r[c] = f.d[c] ? f.d[c][i] : 0.0;
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
  for (int c = 0; c < kMigratedDoubles; ++c)
    if (f.d[c]) f.d[c][i] = r[c];
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
  for (int c = 0; c < kMigratedDoubles; ++c)
    if (f.d[c]) f.d[c][to] = f.d[c][from];
  f.id[to] = f.id[from];
  if (f.work) f.work[to] = f.work[from];
}

/// Leavers held back to a later round: they stay (for now) and fill holes like any stayer.
__global__ void unflag_kernel(const unsigned* held, unsigned count, unsigned char* flags) {
  const unsigned k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < count) flags[held[k]] = 0;
}

/// The round's leavers counted per destination.
__global__ void count_dest(const unsigned* dest, unsigned count, unsigned* counts) {
  const unsigned k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < count) atomicAdd(&counts[dest[k]], 1u);
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

}  // namespace

void DeviceDomain::migrate(const DeviceBodies& b, std::size_t& n, cudaStream_t stream) {
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
  // Rounds of at most `limit` leavers a rank, until no rank has more: the first migration
  // of a run moves about half of every rank's bodies (the start is shared out by index, not
  // by place), and its buffers are then bounded by the round, not by half the bodies.
  const std::size_t limit =
      options_.migration_round > 0 ? options_.migration_round : kMigrationRound;
  stats_.migration = {};
  std::size_t most = 0;  // the most any round of this rank sent or received
  while (migrate_round(b, n, limit, most, stream))
    compute_keys(b, n, stream);  // the bodies moved: their keys again, in the same cube
  // Buffers sized by a large round are given back rather than held for the rest of the run
  // (measured: 4 GB a rank at 32M bodies before the rounds; with rounds, two buffers of a
  // round, 0.89 GB, were held while this compared doubles with bytes). In doubles:
  const std::size_t held = std::max(send_.capacity(), recv_.capacity());
  if (held * sizeof(double) > (std::size_t(64) << 20) && held > 4 * roomy(most) * kRecord) {
    NBODY_CUDA_CHECK(cudaStreamSynchronize(stream));
    for (auto* buffer : {&send_, &recv_}) buffer->release();
    for (auto* buffer : {&leaving_, &dest_sorted_, &sorted_leaving_, &tail_}) buffer->release();
  }
#ifndef NDEBUG
  check_census(before, census(n), "GPU migration");
#endif
}

bool DeviceDomain::migrate_round(const DeviceBodies& b, std::size_t& n, std::size_t limit,
                                 std::size_t& most, cudaStream_t stream) {
  const unsigned parts = unsigned(comm_->parts()), me = unsigned(comm_->part());
  if (std::max<std::size_t>(n, 1) > flags_.capacity())
    flags_.reserve(roomy(std::max<std::size_t>(n, 1)), "domain leavers");
  NBODY_CUDA_CHECK(cudaMemsetAsync(counts_.data(), 0, (parts + 2) * sizeof(unsigned), stream));
  if (n > 0) {
    dest_kernel<<<blocks(n), 256, 0, stream>>>(keys_, unsigned(n), first_.data(), parts, me,
                                               flags_.data(), counts_.data());
    NBODY_CUDA_CHECK_LAUNCH("dest_kernel");
  }
  NBODY_CUDA_CHECK(cudaMemcpyAsync(counts_host_.data(), counts_.data(), parts * sizeof(unsigned),
                                   cudaMemcpyDeviceToHost, stream));
  NBODY_CUDA_CHECK(cudaStreamSynchronize(stream));
  // The leavers' indices, in a list sized by their count (a few thousand a step once the
  // cuts settle; about half the bodies at the first migration, given back after it).
  unsigned leaving = 0;
  for (unsigned p = 0; p < parts; ++p) leaving += p == me ? 0u : counts_host_.data()[p];
  if (std::max(leaving, 1u) > leaving_.capacity())
    leaving_.reserve(roomy(leaving), "domain leavers");
  // This round sends the first `limit` leavers (in body order); the others stay until a
  // later round (their flags cleared, so the holes and the fill below see stayers).
  const unsigned held_back = leaving > limit ? unsigned(leaving - limit) : 0u;
  if (leaving > 0) {
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
  if (held_back > 0) {
    leaving -= held_back;
    unflag_kernel<<<blocks(held_back), 256, 0, stream>>>(leaving_.data() + leaving, held_back,
                                                         flags_.data());
    NBODY_CUDA_CHECK_LAUNCH("unflag_kernel");
  }
  // Who sends how many to whom, and who holds leavers back: one small host exchange.
  std::vector<ForceReducer::Bytes> announce(parts);
  const bool counts_later = held_back > 0;  // this round's counts per destination come below
  std::vector<ForceReducer::Bytes> heard;
  std::vector<std::size_t> send_count(parts), recv_count(parts);
  std::size_t arriving = 0;
  bool more = false;  // some rank held leavers back: another round
  // Leavers grouped by destination (stable: each group in body order), packed.
  const std::size_t record = kRecord * sizeof(double);
  if (leaving > 0) {
    if (2 * std::size_t(leaving) > dest_sorted_.capacity()) {
      dest_sorted_.reserve(2 * roomy(leaving), "leavers' owners");
      sorted_leaving_.reserve(roomy(leaving), "leavers by owner");
    }
    gather_dest<<<blocks(leaving), 256, 0, stream>>>(leaving_.data(), keys_, leaving, first_.data(),
                                                     parts, dest_sorted_.data());
    NBODY_CUDA_CHECK_LAUNCH("gather_dest");
    if (counts_later) {
      NBODY_CUDA_CHECK(cudaMemsetAsync(counts_.data(), 0, parts * sizeof(unsigned), stream));
      count_dest<<<blocks(leaving), 256, 0, stream>>>(dest_sorted_.data(), leaving, counts_.data());
      NBODY_CUDA_CHECK_LAUNCH("count_dest");
      NBODY_CUDA_CHECK(cudaMemcpyAsync(counts_host_.data(), counts_.data(),
                                       parts * sizeof(unsigned), cudaMemcpyDeviceToHost, stream));
      NBODY_CUDA_CHECK(cudaStreamSynchronize(stream));
    }
  }
  for (unsigned p = 0; p < parts; ++p) {
    const unsigned long long c[2] = {p == me ? 0ull : counts_host_.data()[p], held_back};
    announce[p].resize(sizeof c);
    std::memcpy(announce[p].data(), c, sizeof c);
  }
  heard = comm_->exchange(announce);
  for (unsigned p = 0; p < parts; ++p) {
    unsigned long long c[2] = {0, 0};
    if (heard[p].size() != sizeof c) throw Error("migration: a rank sent a malformed count");
    std::memcpy(c, heard[p].data(), sizeof c);
    recv_count[p] = p == me ? 0 : std::size_t(c[0]);
    send_count[p] = p == me ? 0 : counts_host_.data()[p];
    arriving += recv_count[p];
    more = more || c[1] > 0 || (p == me && held_back > 0);
  }
  if (std::size_t(leaving) * kRecord > send_.capacity())
    send_.reserve(roomy(leaving) * kRecord, "migrating bodies");
  if (arriving * kRecord > recv_.capacity())
    recv_.reserve(roomy(arriving) * kRecord, "arriving bodies");
  if (leaving > 0) {
    unsigned* dest_of = dest_sorted_.data();
    unsigned* dest_out = dest_sorted_.data() + leaving;
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
    pack_kernel<<<blocks(leaving), 256, 0, stream>>>(domain_detail::fields(b),
                                                     sorted_leaving_.data(), leaving, send_.data());
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
    for (auto* d : b.doubles)
      if (d) d->grow_keeping(grown, n, "state (arrivals)");
    b.id->grow_keeping(grown, n, "state (arrivals)");
    if (b.work) b.work->grow_keeping(grown, n, "work (arrivals)");
  }
  if (arriving > 0) {
    unpack_kernel<<<blocks(arriving), 256, 0, stream>>>(domain_detail::fields(b), recv_.data(),
                                                        unsigned(arriving), leaving_.data(),
                                                        leaving, unsigned(n));
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
    fill_kernel<<<blocks(tail), 256, 0, stream>>>(domain_detail::fields(b), leaving_.data(),
                                                  unsigned(arriving), tail_.data(),
                                                  counts_.data() + parts + 1, unsigned(tail));
    NBODY_CUDA_CHECK_LAUNCH("fill_kernel");
  }
  n = n_new;
  most = std::max({most, std::size_t(leaving), arriving});
  stats_.migration.sent += leaving;
  stats_.migration.received += arriving;
  stats_.migration.bytes_sent += std::size_t(leaving) * record;
  return more;
}

}  // namespace nbody::parallel
