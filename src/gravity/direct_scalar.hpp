#pragma once
// The reference direct sum: one body at a time, plain loops, no threads, no SIMD.
// Every faster solver is tested against it.
#include "nbody/gravity.hpp"

namespace nbody {

template <class Real>
class DirectSumScalar final : public GravitySolver {
 public:
  DirectSumScalar(double G, double softening) : G_(G), softening_(softening) {}
  [[nodiscard]] std::string name() const override;
  void compute_forces(ParticleSystem& ps, bool potential) override;
  bool set_share(int part, int parts) override {
    part_ = part;
    parts_ = parts;
    return true;
  }

 private:
  double G_;
  double softening_;
  int part_ = 0, parts_ = 1;
};

}  // namespace nbody
