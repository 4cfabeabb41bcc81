// The CPU solvers with test particles (test_particle_gravity.hpp). The active bodies are
// copied into a system of their own, which the run's solver evaluates as if the test
// particles were not there (the same bits as a run without them); the test particles then
// get the float64 direct sum of the active bodies, O(N_test * n_active), and with type 1
// the active bodies get theirs. A copy of the active bodies costs O(n_active) per
// evaluation: nothing beside the forces.
#include "gravity/test_particle_gravity.hpp"

#include <algorithm>
#include <string>
#include <utility>

namespace nbody {

namespace {

class TestParticleGravity final : public GravitySolver {
 public:
  TestParticleGravity(std::unique_ptr<GravitySolver> inner, const GravityOptions& options)
      : inner_(std::move(inner)),
        G_(options.G),
        softening_(options.softening),
        threads_(options.threads) {}

  [[nodiscard]] std::string name() const override { return inner_->name(); }
  [[nodiscard]] SolverStats stats() const override { return inner_->stats(); }
  bool set_share(int part, int parts) override {
    part_ = part;
    parts_ = parts;
    return inner_->set_share(part, parts);
  }

  void compute_forces(ParticleSystem& ps, bool potential) override {
    if (!ps.has_test_particles()) return inner_->compute_forces(ps, potential);
    const std::size_t na = ps.active_count(), n = ps.size();
    copy_active(ps, potential);
    inner_->compute_forces(active_, potential);
    resize_results(ps, potential);
    copy_back(ps, potential, na);
    for (auto* v : {&ps.ax, &ps.ay, &ps.az}) std::fill(v->begin() + long(na), v->end(), 0.0);
    if (potential) std::fill(ps.potential.begin() + long(na), ps.potential.end(), 0.0);
    add_forces_from(ps, ShareRange{na, n}, {0, na}, G_, softening_, threads_, potential, part_,
                    parts_);
    if (ps.test_particle_type == 1) {
      add_forces_from(ps, ShareRange{0, na}, {na, n}, G_, softening_, threads_, potential, part_,
                      parts_);
    }
    ps.set_force_flags(true, potential);
  }

  void compute_forces_active(ParticleSystem& ps, bool potential,
                             const std::vector<std::uint32_t>& active) override {
    if (!ps.has_test_particles()) return inner_->compute_forces_active(ps, potential, active);
    const std::size_t na = ps.active_count(), n = ps.size();
    // The active list is ascending: the active bodies first, then the test particles.
    const auto split = std::lower_bound(active.begin(), active.end(), std::uint32_t(na));
    listed_active_.assign(active.begin(), split);
    listed_test_.assign(split, active.end());
    const bool accelerations_valid = ps.accelerations_valid();
    const bool potentials_valid = ps.potentials_valid();
    resize_results(ps, potential);
    if (!listed_active_.empty()) {
      copy_active(ps, potential);
      inner_->compute_forces_active(active_, potential, listed_active_);
      copy_back(ps, potential, na);
      if (ps.test_particle_type == 1) {
        add_forces_from(ps, listed_active_, {na, n}, G_, softening_, threads_, potential, part_,
                        parts_);
      }
    }
    for (const std::uint32_t i : listed_test_) {
      ps.ax[i] = ps.ay[i] = ps.az[i] = 0;
      if (potential) ps.potential[i] = 0;
    }
    add_forces_from(ps, listed_test_, {0, na}, G_, softening_, threads_, potential, part_, parts_);
    // As GravitySolver::compute_forces_active: the flags are the caller's.
    ps.set_force_flags(accelerations_valid, potentials_valid);
  }

 private:
  /// The active bodies into active_, with their last accelerations (the relative opening
  /// criterion reads them) and, for an evaluation of some of them, their potentials.
  void copy_active(const ParticleSystem& ps, bool potential) {
    const std::size_t na = ps.active_count();
    active_.dim = ps.dim;
    active_.time = ps.time;
    active_.resize(na);
    auto copy = [na](const std::vector<double>& from, std::vector<double>& to) {
      std::copy(from.begin(), from.begin() + long(std::min(na, from.size())), to.begin());
    };
    for (auto [from, to] : {std::pair{&ps.x, &active_.x},
                            {&ps.y, &active_.y},
                            {&ps.z, &active_.z},
                            {&ps.mass, &active_.mass},
                            {&ps.ax, &active_.ax},
                            {&ps.ay, &active_.ay},
                            {&ps.az, &active_.az}}) {
      copy(*from, *to);
    }
    if (potential) copy(ps.potential, active_.potential);
    if (ps.accelerations_valid()) active_.set_accelerations_valid();
  }

  static void resize_results(ParticleSystem& ps, bool potential) {
    for (auto* v : {&ps.ax, &ps.ay, &ps.az}) v->resize(ps.size());
    if (potential) ps.potential.resize(ps.size());
  }

  void copy_back(ParticleSystem& ps, bool potential, std::size_t na) const {
    std::copy(active_.ax.begin(), active_.ax.end(), ps.ax.begin());
    std::copy(active_.ay.begin(), active_.ay.end(), ps.ay.begin());
    std::copy(active_.az.begin(), active_.az.end(), ps.az.begin());
    if (potential) std::copy_n(active_.potential.begin(), na, ps.potential.begin());
  }

  std::unique_ptr<GravitySolver> inner_;
  double G_, softening_;
  int threads_;
  int part_ = 0, parts_ = 1;
  ParticleSystem active_;  // the active bodies of the last evaluation
  std::vector<std::uint32_t> listed_active_, listed_test_;
};

}  // namespace

std::unique_ptr<GravitySolver> with_test_particles(std::unique_ptr<GravitySolver> inner,
                                                   const GravityOptions& options) {
  return std::make_unique<TestParticleGravity>(std::move(inner), options);
}

}  // namespace nbody
