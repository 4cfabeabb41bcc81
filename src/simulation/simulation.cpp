#include "nbody/simulation.hpp"

#include <chrono>
#include <algorithm>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "nbody/error.hpp"
#include "simulation/device_stepper.hpp"

namespace nbody {

// Wraps the solver so that the time spent computing forces is recorded however the
// integrator calls it; "integrate" is then the rest of the step.
//
// It also runs the collision stage, right before each force evaluation: every integrator
// evaluates forces exactly once per step, after its position update, so this is seed 001's
// order (code 5.5: collisions, then forces, then the velocity update) in each scheme, and
// it costs no extra force evaluation: the accelerations are computed at the positions the
// collisions left (merged bodies included) and stay valid for diagnostics and the next step.
class Simulation::TimedGravity final : public GravitySolver {
 public:
  TimedGravity(std::unique_ptr<GravitySolver> inner, std::unique_ptr<CollisionHandler> collisions,
               std::shared_ptr<ForceReducer> reducer)
      : inner_(std::move(inner)), collisions_(std::move(collisions)), reducer_(std::move(reducer)) {
    // Several processes: this one computes its share, and the shares are summed (a solver
    // that cannot split computes everything everywhere, with nothing to sum).
    sharing_ = reducer_ && reducer_->parts() > 1 && inner_->set_share(reducer_->part(), reducer_->parts());
  }
  [[nodiscard]] std::string name() const override { return inner_->name(); }
  [[nodiscard]] SolverStats stats() const override { return inner_->stats(); }
  void compute_accelerations(ParticleSystem& ps) override {
    if (collisions_) {
      const auto start = std::chrono::steady_clock::now();
      totals_.add(collisions_->resolve(ps));
      collision_seconds_ +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    const auto start = std::chrono::steady_clock::now();
    inner_->compute_accelerations(ps);
    if (sharing_) sum_shares(ps);
    seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  double take_seconds() { return std::exchange(seconds_, 0.0); }
  double take_collision_seconds() { return std::exchange(collision_seconds_, 0.0); }
  [[nodiscard]] const CollisionTotals& collision_totals() const { return totals_; }
  void set_collision_totals(const CollisionTotals& totals) { totals_ = totals; }

 private:
  /// One all-reduce of ax, ay, az (packed): every process gets every body's acceleration.
  void sum_shares(ParticleSystem& ps) {
    const std::size_t n = ps.size();
    packed_.resize(3 * n);
    std::copy(ps.ax.begin(), ps.ax.end(), packed_.begin());
    std::copy(ps.ay.begin(), ps.ay.end(), packed_.begin() + std::ptrdiff_t(n));
    std::copy(ps.az.begin(), ps.az.end(), packed_.begin() + std::ptrdiff_t(2 * n));
    reducer_->sum(packed_.data(), packed_.size());
    std::copy(packed_.begin(), packed_.begin() + std::ptrdiff_t(n), ps.ax.begin());
    std::copy(packed_.begin() + std::ptrdiff_t(n), packed_.begin() + std::ptrdiff_t(2 * n), ps.ay.begin());
    std::copy(packed_.begin() + std::ptrdiff_t(2 * n), packed_.end(), ps.az.begin());
  }

  std::unique_ptr<GravitySolver> inner_;
  std::unique_ptr<CollisionHandler> collisions_;
  std::shared_ptr<ForceReducer> reducer_;
  bool sharing_ = false;
  std::vector<double> packed_;
  CollisionTotals totals_;
  double seconds_ = 0;
  double collision_seconds_ = 0;
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

/// Collisions run where the forces do, in the system's dimension, with the run's threads,
/// and count the pair potential with the run's G and softening.
CollisionOptions for_run(CollisionOptions options, const GravityOptions& gravity, int dim) {
  options.dim = dim;
  options.device = gravity.device;
  if (options.threads == 0) options.threads = gravity.threads;
  options.G = gravity.G;
  options.softening = gravity.softening;
  return options;
}

}  // namespace

Simulation::Simulation(ParticleSystem particles, const GravityOptions& gravity,
                       const IntegratorOptions& integrator, const CollisionOptions& collisions,
                       std::shared_ptr<ForceReducer> reducer)
    : particles_(planar_if_2d(std::move(particles))),
      gravity_options_(for_dimension(gravity, particles_.dim)),
      collision_options_(for_run(collisions, gravity_options_, particles_.dim)),
      integrator_(make_integrator(integrator)),
      reducer_(std::move(reducer)) {
  // Before anything goes to the GPU: there is no CUDA collision handler yet, and the
  // factory says so for --device gpu.
  validate(collision_options_);
  const bool collide = collision_options_.model != CollisionModel::None;
  if (collide && !particles_.empty() && !particles_.has_radii()) {
    throw Error(
        fmt::format("--collisions {}: every body has radius 0 (give radii in the 8th column of the "
                    "input file, or --radius R)",
                    to_string(collision_options_.model)));
  }
  if (gravity_options_.device == Device::Gpu) {
    stepper_ = make_device_stepper(gravity_options_, integrator, collision_options_, reducer_);
    stepper_->upload(particles_);  // the one copy in
  } else {
    gravity_ = std::make_unique<TimedGravity>(make_gravity_solver(gravity_options_),
                                              make_collision_handler(collision_options_), reducer_);
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

std::size_t Simulation::size() const {
  if (stepper_ && host_stale_) return stepper_->size();  // merges on the device
  return particles_.size();
}

void Simulation::step(double dt) {
  const auto start = std::chrono::steady_clock::now();
  double gravity_seconds = 0;
  double collision_seconds = 0;
  if (stepper_) {
    sync_to_device();
    stepper_->step(dt);
    host_stale_ = true;
    gravity_seconds = stepper_->take_gravity_seconds();
    if (collision_options_.model != CollisionModel::None) {
      const CollisionStats st = stepper_->take_collision_stats();
      device_collisions_.add(st);
      collision_seconds = st.detect_seconds + st.resolve_seconds;
    }
    for (const auto& [stage, seconds] : stepper_->take_stage_seconds())
      gravity_stages_.add(stage, seconds);
  } else {
    integrator_->step(particles_, *gravity_, dt);
    gravity_seconds = gravity_->take_seconds();
    collision_seconds = gravity_->take_collision_seconds();
    if (gravity_options_.algorithm == "tree") {  // the last evaluation's split
      const SolverStats st = gravity_->stats();
      gravity_stages_.add("build", st.build_seconds);
      gravity_stages_.add("walk", st.walk_seconds);
    }
  }
  const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  times_.add("gravity", gravity_seconds);
  if (collision_options_.model != CollisionModel::None) times_.add("collisions", collision_seconds);
  times_.add("integrate", total - gravity_seconds - collision_seconds);
  ++steps_done_;
}

const GravitySolver& Simulation::gravity() const {
  if (!gravity_) throw Error("Simulation::gravity(): the GPU path has no host solver (use solver_name())");
  return *gravity_;
}

const CollisionTotals& Simulation::collision_totals() const {
  return gravity_ ? gravity_->collision_totals() : device_collisions_;
}

void Simulation::resume(std::uint64_t steps_done, const CollisionTotals& collisions) {
  steps_done_ = steps_done;
  if (gravity_) {
    gravity_->set_collision_totals(collisions);
  } else {
    device_collisions_ = collisions;
  }
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
