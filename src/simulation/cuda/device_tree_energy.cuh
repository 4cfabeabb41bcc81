#pragma once
// The energy method `tree` of a GPU-resident run (--energy tree, and what --energy auto
// picks when the exact pair sum costs too much): the potentials of a float64 tree with
// quadrupoles and the geometric criterion at kTreeEnergyTheta, the CPU method's tree, built
// on the device from the resident state, apart from the run's own solver (whose options and
// forces it does not touch). W = 1/2 sum m_i phi_i then follows as for the solver's phi.
#include <cmath>
#include <memory>

#include "nbody/diagnostics.hpp"
#include "simulation/cuda/diagnostics_kernels.cuh"
#include "simulation/cuda/integration_kernels.cuh"
#include "tree/cuda/tree_gpu.cuh"

namespace nbody::cuda_resident {

class DeviceTreeEnergy {
 public:
  explicit DeviceTreeEnergy(int dim) : dim_(dim) {}

  /// phi (n device doubles) at the state's positions. position_exponent and mass_exponent
  /// scale positions and masses by powers of two (exact), as the run's forces do.
  void potentials(const State& s, double G, double softening, int position_exponent,
                  int mass_exponent, double* phi, cudaStream_t stream) {
    if (!tree_) {
      tree_ = std::make_unique<cuda_tree::TreeForces<double>>(dim_, kTreeEnergyTheta, true,
                                                              OpeningCriterion::Geometric);
    }
    tree_->check_size(s.n);
    tree_->reserve(s.n);
    const double position_scale = std::ldexp(1.0, -position_exponent);
    launch_pack_bodies<double>(s, position_scale, std::ldexp(1.0, -mass_exponent),
                               unsigned(tree_->padded(s.n)), tree_->bodies(), stream);
    tree_->launch(s.n, softening * position_scale, stream, true);
    launch_store_potentials<double>(
        s.n, tree_->out(), G, std::ldexp(1.0, mass_exponent - position_exponent), phi, stream);
  }

  /// The diagnostics with W from those potentials (left in phi).
  [[nodiscard]] Diagnostics diagnostics(const State& s, double G, double softening,
                                        int position_exponent, int mass_exponent, double* phi,
                                        DiagnosticsBuffers& buffers, cudaStream_t stream) {
    potentials(s, G, softening, position_exponent, mass_exponent, phi, stream);
    Diagnostics d = device_diagnostics(s, G, softening, EnergyMethod::Solver, phi, buffers, stream);
    d.energy_method = EnergyMethod::Tree;
    return d;
  }

 private:
  int dim_;
  std::unique_ptr<cuda_tree::TreeForces<double>> tree_;
};

}  // namespace nbody::cuda_resident
