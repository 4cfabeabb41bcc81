// The device Stepper (--device gpu): the state is uploaded once and stays in device memory
// across steps; the integration, the collision stage, the forces and the diagnostics run
// on the GPU, and only download() (for output) copies bodies back.
//
// A step, on one stream: open_step (integration_kernels.cu: physics/integration.hpp's
// per-body update, the CPU loops' function), the collision stage (collisions/cuda), the
// force evaluation (the float64 state packed into the force kernels' (x, y, z, m) layout,
// the direct sum or the tree through DeviceForces, the processes' shares summed through
// NCCL; test particles: test_particle_kernels.cuh), then finish_step (store a; the
// leapfrog's closing kick). Adaptive steps: the bins' substeps of device_block_steps.cuh.
//
// Position scaling: open_step measures the largest |x|, |y|, |z| (and softening) on the
// device; the 8 bytes come back with the end-of-step synchronisation and the next step's
// forces use it, one drift late (powers of two scale exactly; they only keep float r^2 in
// range), so no step waits on the host mid-way. Every step ends with a synchronisation:
// its time is real ("gravity" the CUDA-event time of packing and the force kernels,
// "integrate" the rest), and an error is reported by the step that caused it.
#include <cuda_runtime.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "collisions/cuda/collision_engine.cuh"
#include "core/cuda/cuda_check.cuh"
#include "core/cuda/device_buffer.cuh"
#include "core/cuda/launch.cuh"
#include "gravity/cuda/device_forces.cuh"
#include "gravity/cuda/direct_kernels.cuh"
#include "gravity/cuda/force_scaling.cuh"
#include "gravity/direct_cuda.hpp"
#include "gravity/unit_scaling.hpp"
#include "nbody/build_info.hpp"
#include "nbody/input_error.hpp"
#include "parallel/cuda/device_domain.cuh"
#include "parallel/domain_gravity.hpp"
#include "parallel/domain_state.hpp"
#include "simulation/cuda/device_block_steps.cuh"
#include "simulation/cuda/device_forces_choice.cuh"
#include "simulation/cuda/device_state_copies.cuh"
#include "simulation/cuda/device_tree_energy.cuh"
#include "simulation/cuda/diagnostics_kernels.cuh"
#include "simulation/cuda/domain_forces.cuh"
#include "simulation/cuda/integration_kernels.cuh"
#include "simulation/cuda/test_particle_kernels.cuh"
#include "simulation/stepper.hpp"

namespace nbody {
namespace cuda_resident {

namespace {

using gpu::DeviceBuffer;
using gpu::PinnedBuffer;

template <class Real>
class DeviceStepper final : public Stepper {
 public:
  using RealType = Real;
  DeviceStepper(std::unique_ptr<cuda_gravity::DeviceForces<Real>> forces,
                const SimulationOptions& options, std::shared_ptr<ForceReducer> reducer)
      : forces_(std::move(forces)),
        G_(options.gravity.G),
        softening_(options.gravity.softening),
        integrator_(options.integrator),
        dim_(options.gravity.dim),
        reducer_(std::move(reducer)),
        tree_energy_(options.gravity.dim) {
    if (options.collisions.model != CollisionModel::None)
      collisions_ = std::make_unique<cuda_collisions::CollisionEngine>(options.collisions);
    // Several processes: each owns its bodies where the decomposition runs (domain_forces.cuh);
    // else each computes its share of the forces of all bodies, summed by one all-reduce (an
    // algorithm that cannot split computes everything on every process, no sum).
    if (reducer_ && reducer_->parts() > 1 && parallel::runs_decomposed(options)) {
      domain_forces_ = std::make_unique<DomainForces<Real>>(*forces_, reducer_, options.gravity);
      if (domain_forces_->is_tree())
        domain_ = std::make_unique<parallel::DeviceDomain>(reducer_, options.gravity.dim,
                                                           gpu_domain_options(options.gravity));
    }
    sharing_ = !domain_forces_ && reducer_ && reducer_->parts() > 1 &&
               forces_->set_share(reducer_->part(), reducer_->parts());
    NBODY_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    for (auto& e : events_) NBODY_CUDA_CHECK(cudaEventCreate(&e));
    extent_.reserve(1, "position extent");
    extent_host_.reserve(1);
  }
  ~DeviceStepper() override {
    for (auto& e : events_)
      if (e) cudaEventDestroy(e);
    if (stream_) cudaStreamDestroy(stream_);
  }

  [[nodiscard]] std::string solver_name() const override {
    return forces_->name() + (std::is_same_v<Real, float> ? "-float" : "-double") +
           (domain_forces_ ? "-domain-" + std::to_string(reducer_->parts()) : "-resident");
  }
  [[nodiscard]] bool owns_bodies() const override { return domain_forces_ != nullptr; }

  void upload(ParticleSystem& ps) override { StateCopies::upload(*this, ps); }

  void step(double dt, bool potential) override {
    if (integrator_.timestep == TimestepMode::Adaptive) {  // device_block_steps.cuh
      if (n_ > 0 || domain_forces_) blocks_.step(*this, dt, potential);
      time_ += dt;
      return;
    }
    potentials_valid_ = false;       // the bodies move
    if (n_ > 0 || domain_forces_) {  // a rank that owns nothing still takes part
      const StepFactors f = step_factors(integrator_.scheme, dt, integrator_.damping);
      // Forces first, as the CPU integrators do: gravity alone (contacts wait for the drift).
      if (!accelerations_valid_) first_forces(false, false);
      NBODY_CUDA_CHECK(cudaMemsetAsync(extent_.data(), 0, sizeof(unsigned long long), stream_));
      // With collisions the leapfrog collides mid-drift, as on the CPU (scheme_step.hpp): kick
      // and drift dt/2, collide, drift dt/2; the other schemes after their position update.
      const bool split = collisions_ && integrator_.scheme == IntegratorScheme::Leapfrog;
      const double h = 0.5 * dt;
      launch_open_step(integrator_.scheme, state(), split ? StepFactors{h, f.half, f.damping} : f,
                       extent_.data(), stream_);
      if (split) {
        collide();
        if (n_ > 0) launch_drift_extent(state(), h, extent_.data(), stream_);
      }
      NBODY_CUDA_CHECK(cudaMemcpyAsync(extent_host_.data(), extent_.data(),
                                       sizeof(unsigned long long), cudaMemcpyDeviceToHost,
                                       stream_));
      evaluate_forces(potential, !split);
      launch_finish_step<Real>(integrator_.scheme, true, state(), forces_out(), G_,
                               acceleration_scale(), f, stream_);
      if (potential) store_potentials();
      NBODY_CUDA_CHECK(cudaStreamSynchronize(stream_));
      add_times_of_evaluations();
      // The next step's scaling: the extent after this drift, and the softening.
      double extent = 0;
      std::memcpy(&extent, extent_host_.data(), sizeof extent);
      set_position_exponent(
          std::max(extent, std::isfinite(softening_) ? std::abs(softening_) : 0.0));
      if (domain_forces_) position_exponent_ = reducer_->max(position_exponent_);
    }
    time_ += dt;
  }

  void evaluate(bool potential) override {
    if (n_ == 0 && !domain_forces_) return;
    if (!accelerations_valid_) {  // gravity alone (contacts are resolved by the first step)
      first_forces(false, potential);
    } else if (potential && !potentials_valid_) {       // the potentials; a stays as it was
      evaluate_forces(true, false, nullptr, 0, false);  // no migration: a is kept in its order
      store_potentials();
      NBODY_CUDA_CHECK(cudaStreamSynchronize(stream_));
      add_times_of_evaluations();
    }
  }

  /// The accelerations of a state that has none valid (collision stage first when
  /// `collide_first`; potentials when `potential`), stored and timed before a step's own.
  void first_forces(bool collide_first, bool potential) {
    evaluate_forces(potential, collide_first);
    launch_finish_step<Real>(integrator_.scheme, false, state(), forces_out(), G_,
                             acceleration_scale(), StepFactors{}, stream_);
    accelerations_valid_ = true;
    if (potential) store_potentials();
    NBODY_CUDA_CHECK(cudaStreamSynchronize(stream_));
    add_times_of_evaluations();
  }

  void download(ParticleSystem& ps) override { StateCopies::download(*this, ps); }
  void download_positions(std::vector<float>& xyz) override {
    StateCopies::download_positions(*this, xyz);
  }

  [[nodiscard]] Diagnostics diagnostics(EnergyMethod method) override {
    if (method == EnergyMethod::Solver) evaluate(true);
    if (domain_forces_) return decomposed_diagnostics(method);
    if (method == EnergyMethod::Tree) {
      potentials_valid_ = false;  // phi_ gets the energy tree's potentials
      return tree_energy_.diagnostics(state(), G_, softening_, position_exponent_, mass_exponent_,
                                      phi(), diagnostics_, stream_);
    }
    return device_diagnostics(state(), G_, softening_, method, phi_.data(), diagnostics_, stream_);
  }
  [[nodiscard]] bool tree_energy_here() const override { return !domain_forces_; }

  [[nodiscard]] double time() const override { return time_; }
  [[nodiscard]] std::size_t size() const override { return n_; }
  [[nodiscard]] std::size_t active_count() const override { return tests_.sources(n_); }

 private:
  friend class BlockSteps<DeviceStepper>;
  friend struct cuda_resident::StateCopies;
  [[nodiscard]] State state() const {
    return {x_.data(),  y_.data(),  z_.data(),  vx_.data(), vy_.data(),  vz_.data(),
            ax_.data(), ay_.data(), az_.data(), m_.data(),  unsigned(n_)};
  }

  void set_position_exponent(double extent) {
    position_exponent_ = cuda_gravity::scale_exponent(extent, cuda_gravity::kPositionExponentLimit);
  }
  [[nodiscard]] double acceleration_scale() const {
    return std::ldexp(1.0, mass_exponent_ - 2 * position_exponent_);
  }
  /// Potentials scale as mass / length.
  [[nodiscard]] double potential_scale() const {
    return std::ldexp(1.0, mass_exponent_ - position_exponent_);
  }

  /// The potentials, allocated when first computed (8 bytes a body most runs never use).
  double* phi() {
    phi_.reserve(std::max<std::size_t>(id_.capacity(), 1), "potentials");
    return phi_.data();
  }
  /// phi from the last evaluation (asked for the potentials), before the scaling changes.
  void store_potentials() {
    launch_store_potentials<Real>(unsigned(n_), forces_out(), G_, potential_scale(), phi(),
                                  stream_);
    potentials_valid_ = true;
  }

  /// The force evaluation: the collision stage (merges lower n_) when `collide_first`, then
  /// pack + force kernels (potentials in out().w when `potential`; the shares summed) into
  /// forces_->out(), timed by events. `active` (a device list): those n_active bodies alone.
  void evaluate_forces(bool potential, bool collide_first, const unsigned* active = nullptr,
                       std::size_t n_active = 0, bool migrate = true) {
    if (domain_forces_) return evaluate_owned(potential, migrate, active, n_active);
    if (collide_first) collide();
    const double position_scale = std::ldexp(1.0, -position_exponent_);
    const double mass_scale = std::ldexp(1.0, -mass_exponent_);
    const std::size_t ns = tests_.sources(n_);  // test particles: the active bodies alone
    const State packed = state().first(unsigned(ns));
    NBODY_CUDA_CHECK(cudaEventRecord(events_[2 * timed_pairs_], stream_));
    launch_pack_bodies<Real>(packed, position_scale, mass_scale, unsigned(forces_->padded(ns)),
                             forces_->bodies(), stream_);
    // The tree's relative criterion: a of the last evaluation when of these bodies (as the
    // per-call solver: the same N), |a| / G in the scaled units of this one.
    Real* a_old =
        accelerations_valid_ && evaluated_ == n_ ? forces_->old_accelerations(ns) : nullptr;
    if (a_old)
      launch_acceleration_magnitudes(packed, 1 / (std::abs(G_) * acceleration_scale()), a_old,
                                     stream_);
    evaluated_ = n_;
    tests_.launch(
        *forces_,
        {state(), unsigned(ns), tests_.type(), position_scale, mass_scale,
         Real(softening_ * position_scale), forces_->out(), potential, active, unsigned(n_active)},
        sharing_ ? reducer_.get() : nullptr, stream_);
    NBODY_CUDA_CHECK(cudaEventRecord(events_[2 * timed_pairs_ + 1], stream_));
    ++timed_pairs_;
  }

  /// The collision stage (synchronises the stream); `ready_bin` >= 0: block steps' gate.
  void collide(int ready_bin = -1) {
    if (!collisions_) return;
    cuda_collisions::BodyArrays b{x_.data(),  y_.data(),  z_.data(),      vx_.data(), vy_.data(),
                                  vz_.data(), m_.data(),  r_.data(),      id_.data(), ax_.data(),
                                  ay_.data(), az_.data(), blocks_.bins(), ready_bin};
    b.n_active = tests_.first_test();
    const CollisionStats st = collisions_->resolve(b, n_, stream_);
    tests_.merged(st.active_merged);
    times_.collisions.add(st);
    times_.collision_seconds += st.detect_seconds + st.resolve_seconds;
  }

  /// The forces of the bodies this rank owns (domain_forces.cuh), after the migration when
  /// `migrate` (device_domain.cuh: the bodies may change, in number and order; else the root
  /// box anew); `active`: those alone, and the cuts keep the last full evaluation's work.
  void evaluate_owned(bool potential, bool migrate, const unsigned* active, std::size_t n_active) {
    if (domain_) StateCopies::migrate(*this, migrate);
    // After prepare(): its reallocations are not force work, and the cuts balance this time.
    const auto target = domain_forces_->prepare(n_);
    NBODY_CUDA_CHECK(cudaEventRecord(events_[2 * timed_pairs_], stream_));
    launch_pack_bodies<Real>(state(), std::ldexp(1.0, -position_exponent_),
                             std::ldexp(1.0, -mass_exponent_), unsigned(target.entries),
                             target.bodies, stream_);
    Real* a_old = domain_forces_->is_tree() && accelerations_valid_ && evaluated_ == n_ && n_ > 0
                      ? forces_->old_accelerations(n_)
                      : nullptr;
    if (a_old)
      launch_acceleration_magnitudes(state(), 1 / (std::abs(G_) * acceleration_scale()), a_old,
                                     stream_);
    evaluated_ = n_;
    float* work = domain_ && !active ? work_.data() : nullptr;  // a step ends with a full one
    if (work && n_ > 0) NBODY_CUDA_CHECK(cudaMemsetAsync(work, 0, n_ * sizeof(float), stream_));
    domain_forces_->launch(Real(softening_ * std::ldexp(1.0, -position_exponent_)), stream_,
                           potential, a_old, work, domain_ ? &root_ : nullptr, active, n_active);
    NBODY_CUDA_CHECK(cudaEventRecord(events_[2 * timed_pairs_ + 1], stream_));
    ++timed_pairs_;
    times_.decomposition.evaluations += 1;
    times_.decomposition.bytes_sent += domain_forces_->bytes_sent();
  }

  /// Every rank's sums (the moments, the kinetic energy, the solver's potentials); the
  /// exact pair sum by the host's ring over the ranks (no rank gathers all N).
  Diagnostics decomposed_diagnostics(EnergyMethod method) {
    if (method != EnergyMethod::Exact)
      return device_diagnostics(state(), G_, softening_, method, phi_.data(), diagnostics_, stream_,
                                reducer_.get());
    ParticleSystem local;
    download(local);
    return parallel::exact_diagnostics(local, *reducer_, G_, softening_);
  }

  /// The forces of the last evaluation, in the order of this rank's bodies.
  [[nodiscard]] gpu::Vec4<Real>* forces_out() const {
    return domain_forces_ ? domain_forces_->out() : forces_->out();
  }

  /// After the stream's synchronisation: the event-timed evaluations since the last call
  /// as gravity time, and the per-stage times of the last one (tree).
  void add_times_of_evaluations() {
    if (timed_pairs_ == 0) return;
    if (domain_forces_) {  // this rank's last evaluation: the cuts balance its time
      float ms = 0;
      const int k = timed_pairs_ - 1;
      NBODY_CUDA_CHECK(cudaEventElapsedTime(&ms, events_[2 * k], events_[2 * k + 1]));
      // Net of the waits for the others (DomainTimer::wait_ms): that is their time.
      last_work_ = {1e-3 * std::max(0.0, double(ms) - domain_forces_->wait_ms()),
                    domain_forces_->work()};
    }
    for (int k = 0; k < timed_pairs_; ++k) {
      float ms = 0;
      NBODY_CUDA_CHECK(cudaEventElapsedTime(&ms, events_[2 * k], events_[2 * k + 1]));
      times_.gravity_seconds += double(ms) * 1e-3;
    }
    timed_pairs_ = 0;
    const bool split = domain_forces_ && domain_forces_->is_tree();
    for (const auto& [stage, ms] : forces_->stage_ms()) {
      if (split && stage == "force") continue;  // in its parts, below
      times_.stages.add(stage, ms * 1e-3);
    }
    if (split) domain_forces_->report(times_.stages, times_.decomposition);
    if (domain_)
      for (const auto& [part, ms] : domain_->take_phase_ms())
        times_.decomposition.update.add(part, ms * 1e-3);
  }

  std::unique_ptr<cuda_gravity::DeviceForces<Real>> forces_;
  std::unique_ptr<cuda_collisions::CollisionEngine> collisions_;
  double G_;
  double softening_;
  IntegratorOptions integrator_;
  int dim_;  // the dynamical time-step criterion's cells
  std::shared_ptr<ForceReducer> reducer_;
  DeviceTreeEnergy tree_energy_;  // --energy tree
  bool sharing_ = false;
  std::unique_ptr<DomainForces<Real>> domain_forces_;  // this rank owns its bodies
  std::unique_ptr<parallel::DeviceDomain> domain_;     // the tree's: keys, cuts, migration
  DeviceBuffer<float> work_;                           // the tree's work per body (the cuts)
  parallel::DeviceDomain::Work last_work_;             // this rank's last evaluation
  cuda_tree::Bounds root_{};                           // the tree's root box (scaled units)
  cudaStream_t stream_ = nullptr;
  cudaEvent_t events_[4] = {};
  int timed_pairs_ = 0;
  DeviceBuffer<double> x_, y_, z_, vx_, vy_, vz_, ax_, ay_, az_, phi_, m_, r_;
  DeviceBuffer<std::uint64_t> id_;
  DeviceBuffer<unsigned long long> extent_;
  PinnedBuffer<unsigned long long> extent_host_;
  DeviceBuffer<float> positions_;
  PinnedBuffer<float> positions_host_;
  gpu::HostDownload host_download_;  // download(): the state through pinned chunks
  DiagnosticsBuffers diagnostics_;
  BlockSteps<DeviceStepper> blocks_;  // adaptive steps: the bins
  TestParticles<Real> tests_;         // the state's n_active and type
  std::size_t n_ = 0;
  std::size_t evaluated_ = 0;  // bodies of the last force evaluation
  double time_ = 0;
  bool accelerations_valid_ = false;
  bool potentials_valid_ = false;  // phi_ holds the potentials at the current positions
  bool radii_ = false;             // r_ holds the radii (else every radius is 0, r_ unused)
  int position_exponent_ = 0;
  int mass_exponent_ = 0;
};

}  // namespace
}  // namespace cuda_resident

std::unique_ptr<Stepper> make_device_stepper(const SimulationOptions& options,
                                             std::shared_ptr<ForceReducer> reducer) {
  GravityOptions o = options.gravity;
  o.precision = resolve_precision(o.precision, o.algorithm);
  // The option checks (algorithm, kernel, block size, softening, a usable device) are the
  // GPU solver's: build one and drop it, so the messages are the same as with the solver.
  // (No gravity needs no solver, but the run still needs a GPU.)
  (void)make_gravity_solver(o);
  if (std::string reason; gpu_devices(&reason).empty())
    throw input_error("--device", reason, "gpu");
  validate(options.integrator);
  auto make = [&](auto real) -> std::unique_ptr<Stepper> {
    using Real = decltype(real);
    gpu::select_gpu();
    return std::make_unique<cuda_resident::DeviceStepper<Real>>(
        cuda_resident::make_device_forces<Real>(o), options, std::move(reducer));
  };
  if (o.precision == Precision::Float) return make(float{});
  return make(double{});
}

}  // namespace nbody
