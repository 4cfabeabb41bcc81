#pragma once
// The GPU Barnes-Hut solver behind GravitySolver. Plain C++: defined in
// cuda/tree_gpu_solver.cu when the build has CUDA, else in tree_cuda_none.cpp (throws).
#include <memory>

#include "nbody/gravity.hpp"

namespace nbody {

/// The GPU tree for options.theta, .quadrupole, .mac, .alpha, .dim, .softening, .G,
/// .precision (Float or Double). Throws nbody::Error for bad options, a build without CUDA
/// or no usable device.
[[nodiscard]] std::unique_ptr<GravitySolver> make_tree_cuda(const GravityOptions& options);

}  // namespace nbody
