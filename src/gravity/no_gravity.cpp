#include "gravity/no_gravity.hpp"

#include <algorithm>

namespace nbody {

namespace {

class NoGravity final : public GravitySolver {
 public:
  [[nodiscard]] std::string name() const override { return "none"; }
  void compute_forces(ParticleSystem& ps, bool potential) override {
    for (auto* a : {&ps.ax, &ps.ay, &ps.az}) a->assign(ps.size(), 0.0);
    ps.set_accelerations_valid();
    if (potential) {
      ps.potential.assign(ps.size(), 0.0);
      ps.set_potentials_valid();
    } else {
      ps.invalidate_potentials();
    }
  }
  // Every process computes its (empty) share: zeros summed are zeros.
  bool set_share(int, int) override { return true; }
};

}  // namespace

std::unique_ptr<GravitySolver> make_no_gravity() {
  return std::make_unique<NoGravity>();
}

}  // namespace nbody
