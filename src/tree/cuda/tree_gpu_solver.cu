// The GPU tree as a per-call GravitySolver (nbody accuracy, nbody bench tree, tests):
// DeviceForcesSolver (gravity/cuda/device_forces_solver.cuh) around TreeForces, with the
// direct sum's power-of-two scaling; stats() from the tree's stage times. `nbody run
// --device gpu` instead keeps everything on the device (simulation/cuda/device_stepper.cu).
#include <memory>
#include <string>
#include <utility>

#include "core/cuda/launch.cuh"
#include "gravity/cuda/device_forces_solver.cuh"
#include "nbody/build_info.hpp"
#include "nbody/error.hpp"
#include "nbody/input_error.hpp"
#include "tree/cuda/tree_gpu.cuh"
#include "tree/tree_cuda.hpp"

namespace nbody {
namespace cuda_tree {
namespace {

template <class Real>
std::unique_ptr<GravitySolver> make_solver(const GravityOptions& o) {
  gpu::select_gpu();  // before TreeForces allocates
  auto forces = std::make_unique<TreeForces<Real>>(o.dim, o.theta, o.quadrupole, o.mac, o.alpha,
                                                   o.tree_build);
  forces->set_input_order_walk(o.tree_input_order_walk);
  // The name as the CPU tree's: "-quadrupole", then the criterion unless geometric.
  std::string suffix = o.quadrupole ? "-quadrupole" : "";
  if (o.mac != OpeningCriterion::Geometric) suffix += "-" + std::string(to_string(o.mac));
  cuda_gravity::SolverSetup setup{o.G, o.softening, o.dim == 2, std::move(suffix)};
  return std::make_unique<cuda_gravity::DeviceForcesSolver<Real>>(std::move(forces),
                                                                  std::move(setup));
}

}  // namespace
}  // namespace cuda_tree

std::unique_ptr<GravitySolver> make_tree_cuda(const GravityOptions& o) {
  std::string reason;
  if (gpu_devices(&reason).empty()) throw input_error("--device", reason, "gpu");
  if (o.precision == Precision::Double) return cuda_tree::make_solver<double>(o);
  return cuda_tree::make_solver<float>(o);
}

}  // namespace nbody
