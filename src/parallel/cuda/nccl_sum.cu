// ncclAllReduce of force buffers between the ranks of a distributed run: one call per
// step, in place, on the stepper's stream, so it orders after the force kernels and
// before the integration kernels without a host synchronisation.
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/launch.cuh"
#include "nbody/error.hpp"
#include "parallel/device_sum.hpp"

namespace nbody::parallel {

namespace {

void check(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) {
    throw Error(std::string("NCCL ") + what + ": " + ncclGetErrorString(r) +
                " (NCCL_DEBUG=WARN says more; on NVLink hosts keep NCCL_NVLS_ENABLE=0)");
  }
}

class NcclSum final : public DeviceSum {
 public:
  NcclSum(int rank, int size, const NcclId& id) {
    ncclUniqueId uid;
    static_assert(sizeof(uid.internal) == std::tuple_size_v<NcclId>);
    std::memcpy(uid.internal, id.data(), id.size());
    gpu::select_gpu();
    check(ncclCommInitRank(&comm_, size, uid, rank), "ncclCommInitRank");
  }
  ~NcclSum() override { ncclCommDestroy(comm_); }

  void gather(const void* send, void* recv, std::size_t count, bool is_double,
              void* stream) override {
    check(ncclAllGather(send, recv, count, is_double ? ncclDouble : ncclFloat, comm_,
                        static_cast<cudaStream_t>(stream)),
          "ncclAllGather");
  }

  void exchange(const std::vector<const void*>& send, const std::vector<std::size_t>& send_bytes,
                const std::vector<void*>& recv, const std::vector<std::size_t>& recv_bytes,
                void* stream) override {
    const auto s = static_cast<cudaStream_t>(stream);
    int me = 0;
    check(ncclCommUserRank(comm_, &me), "ncclCommUserRank");
    check(ncclGroupStart(), "ncclGroupStart");
    for (std::size_t p = 0; p < send.size(); ++p) {
      if (int(p) == me) continue;
      if (send_bytes[p] > 0)
        check(ncclSend(send[p], send_bytes[p], ncclChar, int(p), comm_, s), "ncclSend");
      if (recv_bytes[p] > 0)
        check(ncclRecv(recv[p], recv_bytes[p], ncclChar, int(p), comm_, s), "ncclRecv");
    }
    check(ncclGroupEnd(), "ncclGroupEnd");
  }

  void sum(void* values, std::size_t n, bool is_double, void* stream) override {
    check(ncclAllReduce(values, values, n, is_double ? ncclDouble : ncclFloat, ncclSum, comm_,
                        static_cast<cudaStream_t>(stream)),
          "ncclAllReduce");
  }

 private:
  ncclComm_t comm_{};
};

}  // namespace

bool nccl_built_in() {
  return true;
}

NcclId make_nccl_id() {
  ncclUniqueId uid;
  check(ncclGetUniqueId(&uid), "ncclGetUniqueId");
  NcclId id;
  std::memcpy(id.data(), uid.internal, id.size());
  return id;
}

std::unique_ptr<DeviceSum> make_nccl_sum(int rank, int size, const NcclId& id) {
  return std::make_unique<NcclSum>(rank, size, id);
}

}  // namespace nbody::parallel
