// TreeForces::exchange (tree_gpu.cuh): the shares of a run whose processes all build the
// whole tree, each walking its dealt chunks, gathered into every process's forces.
#include <cuda_runtime.h>

#include <type_traits>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/launch.cuh"
#include "tree/cuda/tree_gpu.cuh"

namespace nbody::cuda_tree {

namespace {

/// exchange(): this process's chunks, in chunk order, `width` values per body (3: the
/// acceleration; 4: and the potential), 0 past n.
template <class Real>
__global__ void pack_share(const Vec4<Real>* __restrict__ out, const unsigned* __restrict__ order,
                           unsigned n, unsigned part, unsigned parts, unsigned long long slots,
                           unsigned width, Real* send) {
  const unsigned long long s = blockIdx.x * 256ull + threadIdx.x;
  if (s >= slots) return;
  const unsigned long long chunk = (s / kShareChunkBodies) * parts + part;
  const unsigned long long pos = chunk * kShareChunkBodies + s % kShareChunkBodies;
  const Vec4<Real> a = pos < n ? out[order[pos]] : Vec4<Real>{};
  Real* d = send + width * s;
  d[0] = a.x, d[1] = a.y, d[2] = a.z;
  if (width == 4) d[3] = a.w;
}

/// exchange(): every body's acceleration (and potential) from its owner's block of the
/// gathered chunks.
template <class Real>
__global__ void unpack_shares(const Real* __restrict__ recv, const unsigned* __restrict__ order,
                              unsigned n, unsigned parts, unsigned long long slots, unsigned width,
                              Vec4<Real>* out) {
  const unsigned pos = blockIdx.x * 256u + threadIdx.x;
  if (pos >= n) return;
  const unsigned chunk = pos / kShareChunkBodies;
  const unsigned long long s = (chunk % parts) * slots +
                               (unsigned long long)(chunk / parts) * kShareChunkBodies +
                               pos % kShareChunkBodies;
  const Real* r = recv + width * s;
  out[order[pos]] = {r[0], r[1], r[2], width == 4 ? r[3] : Real(0)};
}

}  // namespace

template <class Real>
void TreeForces<Real>::exchange(ForceReducer& reducer, std::size_t n, cudaStream_t stream) {
  if (n == 0) return;
  const std::size_t chunks = (n + kShareChunkBodies - 1) / kShareChunkBodies;
  const std::size_t parts = std::size_t(parts_);
  const std::size_t slots = (chunks + parts - 1) / parts * kShareChunkBodies;  // per process, equal
  const unsigned width = potential_ ? 4u : 3u;
  share_send_.reserve(width * slots, "force shares");
  share_recv_.reserve(width * slots * parts, "gathered force shares");
  pack_share<Real><<<gpu::blocks_for(slots, 256), 256, 0, stream>>>(
      out(), order_.data(), unsigned(n), unsigned(part_), unsigned(parts), slots, width,
      share_send_.data());
  NBODY_CUDA_CHECK_LAUNCH("pack_share");
  reducer.gather_device(share_send_.data(), share_recv_.data(), width * slots,
                        std::is_same_v<Real, double>, stream);
  unpack_shares<Real><<<gpu::blocks_for(n, 256), 256, 0, stream>>>(
      share_recv_.data(), order_.data(), unsigned(n), unsigned(parts), slots, width, out());
  NBODY_CUDA_CHECK_LAUNCH("unpack_shares");
}

template void TreeForces<float>::exchange(ForceReducer&, std::size_t, cudaStream_t);
template void TreeForces<double>::exchange(ForceReducer&, std::size_t, cudaStream_t);

}  // namespace nbody::cuda_tree
