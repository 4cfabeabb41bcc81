// make_tree_cuda() for builds without CUDA: --device gpu fails with a clear message.
#include "nbody/error.hpp"
#include "nbody/input_error.hpp"
#include "tree/tree_cuda.hpp"

namespace nbody {

std::unique_ptr<GravitySolver> make_tree_cuda(const GravityOptions&) {
  throw input_error("--device",
                    "this nbody was built without CUDA (configure with -DNBODY_CUDA=ON or the "
                    "cuda preset)",
                    "gpu");
}

}  // namespace nbody
