// make_direct_cuda() for builds without CUDA: --device gpu fails with a clear message.
#include "gravity/direct_cuda.hpp"

#include "nbody/error.hpp"
#include "nbody/input_error.hpp"

namespace nbody {

namespace {
[[noreturn]] void no_cuda() {
  throw input_error("--device",
                    "this nbody was built without CUDA (configure with -DNBODY_CUDA=ON or the "
                    "cuda preset)",
                    "gpu");
}
}  // namespace

std::unique_ptr<GravitySolver> make_direct_cuda(const GravityOptions&) {
  no_cuda();
}

namespace cuda_direct {
void check_capacity(std::size_t, Precision) {
  no_cuda();
}
void try_device_allocation(std::size_t) {
  no_cuda();
}
}  // namespace cuda_direct

}  // namespace nbody
