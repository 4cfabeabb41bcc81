// make_device_stepper() for builds without CUDA: --device gpu fails exactly as it does
// for the GPU solver (the gravity factory checks the options, then make_direct_cuda of
// direct_cuda_none.cpp throws "--device: this nbody was built without CUDA ... (got gpu)").
#include "nbody/error.hpp"
#include "nbody/input_error.hpp"
#include "simulation/stepper.hpp"

namespace nbody {

std::unique_ptr<Stepper> make_device_stepper(const SimulationOptions& options,
                                             std::shared_ptr<ForceReducer>) {
  (void)make_gravity_solver(options.gravity);                           // throws
  throw input_error("--device", "not available in this build", "gpu");  // not reached
}

}  // namespace nbody
