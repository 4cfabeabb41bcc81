#include "nbody/simulation.hpp"

#include <chrono>

#include "nbody/error.hpp"
#include "simulation/device_stepper.hpp"

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
      integrator_(make_integrator(integrator)) {
  if (gravity_options_.device == Device::Gpu) {
    stepper_ = make_device_stepper(gravity_options_, integrator);
    stepper_->upload(particles_);  // the one copy in
  } else {
    gravity_ = std::make_unique<TimedGravity>(make_gravity_solver(gravity_options_));
  }
}

Simulation::~Simulation() = default;
Simulation::Simulation(Simulation&&) noexcept = default;
Simulation& Simulation::operator=(Simulation&&) noexcept = default;

void Simulation::sync_from_device() const {
  if (stepper_ && host_stale_) {
    stepper_->download(particles_);
    host_stale_ = false;
  }
}

void Simulation::sync_to_device() {
  if (stepper_ && host_edited_) {
    stepper_->upload(particles_);
    host_edited_ = false;
  }
}

ParticleSystem& Simulation::particles() {
  sync_from_device();
  if (stepper_) host_edited_ = true;
  return particles_;
}

const ParticleSystem& Simulation::particles() const {
  sync_from_device();
  return particles_;
}

double Simulation::time() const {
  if (stepper_ && host_stale_) return stepper_->time();
  return particles_.time;
}

std::size_t Simulation::size() const { return particles_.size(); }

void Simulation::step(double dt) {
  const auto start = std::chrono::steady_clock::now();
  double gravity_seconds = 0;
  if (stepper_) {
    sync_to_device();
    stepper_->step(dt);
    host_stale_ = true;
    gravity_seconds = stepper_->take_gravity_seconds();
  } else {
    integrator_->step(particles_, *gravity_, dt);
    gravity_seconds = gravity_->take_seconds();
  }
  const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  times_.add("gravity", gravity_seconds);
  times_.add("integrate", total - gravity_seconds);
  ++steps_done_;
}

const GravitySolver& Simulation::gravity() const {
  if (!gravity_) throw Error("Simulation::gravity(): the GPU path has no host solver (use solver_name())");
  return *gravity_;
}

std::string Simulation::solver_name() const { return stepper_ ? stepper_->solver_name() : gravity_->name(); }

Diagnostics Simulation::diagnostics() {
  ScopedPhase phase(times_, "diagnostics");
  if (stepper_) {
    sync_to_device();
    return stepper_->diagnostics();
  }
  return compute_diagnostics(particles_, gravity_options_.G, gravity_options_.softening);
}

}  // namespace nbody
