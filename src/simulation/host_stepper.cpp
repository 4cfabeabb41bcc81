// The host Stepper: the CPU gravity solver (direct sum or tree, SIMD + OpenMP), the CPU
// integrators and the collision handler, stepping the host copy of the state in place.
//
// A step is the integrator's: its position update, then one force evaluation, then its
// velocity update. The force evaluation is this stepper's three stages, in seed 001's
// order (code 5.5: collisions, then forces, then the velocity update):
//   1. collisions: contacts resolved at the new positions (merged bodies leave the state);
//   2. gravity: the solver's accelerations at the positions the collisions left, so they
//      stay valid for the diagnostics and the next step at no extra evaluation;
//   3. several processes: each computed its share, one all-reduce sums them.
#include <algorithm>
#include <chrono>
#include <utility>
#include <vector>

#include "nbody/error.hpp"
#include "simulation/stepper.hpp"

namespace nbody {

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

class HostStepper final : public Stepper {
 public:
  HostStepper(const SimulationOptions& options, std::shared_ptr<ForceReducer> reducer)
      : options_(options),
        gravity_(make_gravity_solver(options.gravity)),
        collisions_(make_collision_handler(options.collisions)),
        integrator_(make_integrator(options.integrator)),
        reducer_(std::move(reducer)) {
    // Several processes: this one computes its share, and the shares are summed (a solver
    // that cannot split computes everything everywhere, with nothing to sum).
    sharing_ = reducer_ && reducer_->parts() > 1 &&
               gravity_->set_share(reducer_->part(), reducer_->parts());
  }

  [[nodiscard]] std::string solver_name() const override { return gravity_->name(); }

  void upload(ParticleSystem& host) override { state_ = &host; }

  void step(double dt) override {
    integrator_->step(
        *state_, [this](ParticleSystem& ps) { evaluate_forces(ps); }, dt);
    if (options_.gravity.algorithm == GravityAlgorithm::Tree) {  // the last evaluation's split
      const SolverStats st = gravity_->stats();
      times_.stages.add("build", st.build_seconds);
      times_.stages.add("walk", st.walk_seconds);
    }
  }

  void download(ParticleSystem&) override {}  // the host copy is the state

  void download_positions(std::vector<float>& xyz) override { positions_as_float(*state_, xyz); }

  [[nodiscard]] Diagnostics diagnostics() override {
    return compute_diagnostics(*state_, options_.gravity.G, options_.gravity.softening);
  }

  [[nodiscard]] StepTimes take_times() override { return std::exchange(times_, StepTimes{}); }
  [[nodiscard]] double time() const override { return state_->time; }
  [[nodiscard]] std::size_t size() const override { return state_->size(); }

 private:
  /// The force evaluation the integrator calls: collisions, gravity, the sum of the shares.
  void evaluate_forces(ParticleSystem& ps) {
    if (collisions_) {
      const auto start = std::chrono::steady_clock::now();
      times_.collisions.add(collisions_->resolve(ps));
      times_.collision_seconds += seconds_since(start);
    }
    const auto start = std::chrono::steady_clock::now();
    gravity_->compute_accelerations(ps);
    if (sharing_) sum_shares(ps);
    times_.gravity_seconds += seconds_since(start);
  }

  /// One all-reduce of ax, ay, az (packed): every process gets every body's acceleration.
  void sum_shares(ParticleSystem& ps) {
    const std::size_t n = ps.size();
    const auto n3 = std::ptrdiff_t(n);
    packed_.resize(3 * n);
    std::copy(ps.ax.begin(), ps.ax.end(), packed_.begin());
    std::copy(ps.ay.begin(), ps.ay.end(), packed_.begin() + n3);
    std::copy(ps.az.begin(), ps.az.end(), packed_.begin() + 2 * n3);
    reducer_->sum(packed_.data(), packed_.size());
    std::copy(packed_.begin(), packed_.begin() + n3, ps.ax.begin());
    std::copy(packed_.begin() + n3, packed_.begin() + 2 * n3, ps.ay.begin());
    std::copy(packed_.begin() + 2 * n3, packed_.end(), ps.az.begin());
  }

  SimulationOptions options_;
  std::unique_ptr<GravitySolver> gravity_;
  std::unique_ptr<CollisionHandler> collisions_;
  std::unique_ptr<Integrator> integrator_;
  std::shared_ptr<ForceReducer> reducer_;
  bool sharing_ = false;
  ParticleSystem* state_ = nullptr;
  std::vector<double> packed_;
  StepTimes times_;
};

}  // namespace

std::unique_ptr<Stepper> make_host_stepper(const SimulationOptions& options,
                                           std::shared_ptr<ForceReducer> reducer) {
  return std::make_unique<HostStepper>(options, std::move(reducer));
}

std::unique_ptr<Stepper> make_stepper(const SimulationOptions& options,
                                      std::shared_ptr<ForceReducer> reducer) {
  if (options.gravity.device == Device::Gpu)
    return make_device_stepper(options, std::move(reducer));
  return make_host_stepper(options, std::move(reducer));
}

}  // namespace nbody
