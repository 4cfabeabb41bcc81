#pragma once
// Summing device buffers across processes (NCCL), behind a plain C++ wall: defined in
// cuda/nccl_sum.cu when the build has CUDA and NCCL, else in nccl_none.cpp.
#include <array>
#include <cstddef>
#include <memory>
#include <vector>

namespace nbody::parallel {

using NcclId = std::array<char, 128>;  // ncclUniqueId's bytes (NCCL_UNIQUE_ID_BYTES)

class DeviceSum {
 public:
  virtual ~DeviceSum() = default;
  /// In-place sum of n floats (or doubles) over the group, ordered on a cudaStream_t.
  virtual void sum(void* values, std::size_t n, bool is_double, void* stream) = 0;
  /// recv = every rank's `count` values of send, in rank order (ncclAllGather).
  virtual void gather(const void* send, void* recv, std::size_t count, bool is_double,
                      void* stream) = 0;
  /// ForceReducer::exchange_device: one ncclGroupStart/End of ncclSend and ncclRecv.
  virtual void exchange(const std::vector<const void*>& send,
                        const std::vector<std::size_t>& send_bytes, const std::vector<void*>& recv,
                        const std::vector<std::size_t>& recv_bytes, void* stream) = 0;
};

[[nodiscard]] bool nccl_built_in();
/// A new NCCL id (rank 0 makes it, the others receive it through MPI).
[[nodiscard]] NcclId make_nccl_id();
/// Joins the NCCL group (collective: every rank of the group calls it with the same id),
/// on the GPU this process uses (gpu_in_use()).
[[nodiscard]] std::unique_ptr<DeviceSum> make_nccl_sum(int rank, int size, const NcclId& id);

}  // namespace nbody::parallel
