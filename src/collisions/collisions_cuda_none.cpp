// The GPU collision handler in builds without CUDA: a clear error.
#include "collisions/collisions_cuda.hpp"
#include "nbody/error.hpp"
#include "nbody/input_error.hpp"

namespace nbody::collisions {

namespace {
[[noreturn]] void no_cuda() {
  throw input_error("--device",
                    "this nbody was built without CUDA (configure with -DNBODY_CUDA=ON or the "
                    "cuda preset)",
                    "gpu");
}
}  // namespace

std::unique_ptr<CollisionHandler> make_gpu_collision_handler(const CollisionOptions&) {
  no_cuda();
}
std::vector<IndexPair> find_contact_pairs_gpu(const ParticleSystem&, double, CollisionSearch) {
  no_cuda();
}

}  // namespace nbody::collisions
