#pragma once
// The DeviceForces a resident run evaluates for its gravity options: none (no gravity, or
// G = 0), the tree (with its opening criterion), or the direct sum with its kernel.
#include <memory>

#include "gravity/cuda/device_forces.cuh"
#include "gravity/cuda/direct_kernels.cuh"
#include "nbody/gravity.hpp"
#include "simulation/cuda/no_forces.cuh"
#include "tree/cuda/tree_gpu.cuh"

namespace nbody::cuda_resident {

/// Call on the run's GPU (gpu::select_gpu()): the forces allocate there.
template <class Real>
std::unique_ptr<cuda_gravity::DeviceForces<Real>> make_device_forces(const GravityOptions& o) {
  if (o.algorithm == GravityAlgorithm::None || o.G == 0.0)
    return std::make_unique<NoForces<Real>>();
  if (o.algorithm == GravityAlgorithm::Tree) {
    auto tree = std::make_unique<cuda_tree::TreeForces<Real>>(o.dim, o.theta, o.quadrupole, o.mac,
                                                              o.alpha, o.tree_build);
    tree->set_input_order_walk(o.tree_input_order_walk);
    return tree;
  }
  const cuda_direct::KernelChoice k =
      cuda_direct::choose_kernel(o.kernel, o.block_size, o.deterministic);
  return std::make_unique<cuda_direct::DirectForces<Real>>(k.kernel, k.block, k.each_pair_once);
}

}  // namespace nbody::cuda_resident
