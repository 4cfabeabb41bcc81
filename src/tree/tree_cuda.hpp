#pragma once
// The GPU Barnes-Hut solver behind GravitySolver. Plain C++: defined in
// cuda/tree_gpu_solver.cu when the build has CUDA, else in tree_cuda_none.cpp (throws).
#include <memory>
#include <string>

#include "nbody/error.hpp"
#include "nbody/gravity.hpp"

namespace nbody {

/// The GPU tree for options.theta, .quadrupole, .dim, .softening, .G, .precision (Float or
/// Double). Throws nbody::Error for bad options, a build without CUDA or no usable device.
[[nodiscard]] std::unique_ptr<GravitySolver> make_tree_cuda(const GravityOptions& options);

/// The GPU tree opens cells by the geometric criterion only, so far (issue #22): throws
/// nbody::Error naming --mac for the others.
inline void check_gpu_tree_criterion(const GravityOptions& options) {
  if (options.mac == OpeningCriterion::Geometric) return;
  throw Error("--mac " + std::string(to_string(options.mac)) +
              ": the GPU tree has the geometric criterion only so far (--device cpu has all "
              "three)");
}

}  // namespace nbody
