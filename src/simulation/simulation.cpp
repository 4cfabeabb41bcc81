#include "nbody/simulation.hpp"

#include <chrono>

namespace nbody {

// Wraps the solver so that the time spent computing forces is recorded however the
// integrator calls it; "integrate" is then the rest of the step.
class Simulation::TimedGravity final : public GravitySolver {
 public:
  explicit TimedGravity(std::unique_ptr<GravitySolver> inner) : inner_(std::move(inner)) {}
  [[nodiscard]] std::string name() const override { return inner_->name(); }
  [[nodiscard]] SolverStats stats() const override { return inner_->stats(); }
  void compute_accelerations(ParticleSystem& ps) override {
    const auto start = std::chrono::steady_clock::now();
    inner_->compute_accelerations(ps);
    seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  double take_seconds() {
    const double s = seconds_;
    seconds_ = 0;
    return s;
  }

 private:
  std::unique_ptr<GravitySolver> inner_;
  double seconds_ = 0;
};

namespace {
ParticleSystem planar_if_2d(ParticleSystem ps) {
  if (ps.dim == 2) ps.make_planar();
  return ps;
}

/// The solver builds a quadtree or an octree to match the system.
GravityOptions for_dimension(GravityOptions options, int dim) {
  options.dim = dim;
  return options;
}
}  // namespace

Simulation::Simulation(ParticleSystem particles, const GravityOptions& gravity,
                       const IntegratorOptions& integrator)
    : particles_(planar_if_2d(std::move(particles))),
      gravity_options_(for_dimension(gravity, particles_.dim)),
      gravity_(std::make_unique<TimedGravity>(make_gravity_solver(gravity_options_))),
      integrator_(make_integrator(integrator)) {}

Simulation::~Simulation() = default;
Simulation::Simulation(Simulation&&) noexcept = default;
Simulation& Simulation::operator=(Simulation&&) noexcept = default;

void Simulation::step(double dt) {
  const auto start = std::chrono::steady_clock::now();
  integrator_->step(particles_, *gravity_, dt);
  const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double gravity_seconds = gravity_->take_seconds();
  times_.add("gravity", gravity_seconds);
  times_.add("integrate", total - gravity_seconds);
  ++steps_done_;
}

const GravitySolver& Simulation::gravity() const { return *gravity_; }

Diagnostics Simulation::diagnostics() {
  ScopedPhase phase(times_, "diagnostics");
  return compute_diagnostics(particles_, gravity_options_.G, gravity_options_.softening);
}

}  // namespace nbody
