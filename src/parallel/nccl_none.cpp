// Builds without CUDA or without NCCL: GPU runs of several ranks are refused with the
// reason (CPU runs of several ranks need only MPI).
#include "nbody/error.hpp"
#include "parallel/device_sum.hpp"

namespace nbody::parallel {

bool nccl_built_in() {
  return false;
}

NcclId make_nccl_id() {
  return {};
}

std::unique_ptr<DeviceSum> make_nccl_sum(int, int, const NcclId&) {
  throw Error(
      "--device gpu with several MPI ranks: this nbody was built without NCCL (install NCCL with "
      "the CUDA "
      "toolkit and rebuild), or run one rank per GPU with --device cpu");
}

}  // namespace nbody::parallel
