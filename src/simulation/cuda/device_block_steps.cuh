#pragma once
// Hierarchical (block) time steps in the device stepper (issue #19): one step of dt made
// of the bins' substeps, the host stepper's arithmetic in the same order (block_steps.hpp,
// docs/timesteps.md), so that with equal accelerations the GPU gives the CPU's bits:
//
//   forces if not valid (collisions first; with the potentials when eps = 0 or with the
//   dynamical criterion: the rule needs them), or the potentials alone when stale;
//   every body: its bin from wanted_step() (the dynamical criterion: from the densities of
//   cell_density.cuh, computed at the step's start and after each drift), the opening half
//   kick of its bin;
//   until tick kTicksPerStep: T2 = the next step end of a populated bin, every body drifts
//   dt (T2 - T) 2^-30, the collision stage, the forces of the bodies active at T2 (their
//   bin's step ends there), for each: a stored, the closing half kick of its old bin and,
//   before the step's end, its new bin (next_bin()) and the opening half kick of that.
//
// The host needs three things per substep: T2 (from the bin histogram), the number of
// active bodies (the force launch's size) and, for the position scaling, the drift's
// extent. All three come back in ONE copy at the end of the substep before
// (SubstepCounts): after a substep's kicks the device makes the histogram, T2 from it
// (the host's function, checked against the host's own), and the list of the bodies
// active at T2, which no drift changes; only merges do, so a substep whose collision
// stage merged bodies (the stage synchronises anyway) lists them again. The position
// scaling lags one drift, as in the fixed step (device_stepper.cu): with every body in
// bin 0 this is the fixed leapfrog, bit for bit. With every body active (the step's
// last substep, or all in one bin) the forces are the full launch() of the fixed step.
//
// GPU ranks that own their bodies (issue 36; domain_forces.cuh): the bodies migrate at the
// step's start, before their bins are set, and not again until the next (the bins and the
// active lists are in the bodies' order; a substep's tree takes its root box from where the
// bodies are). Each substep's histograms (with the floored counts and the drift's extent)
// are all-gathered, so every rank takes the same substeps and position scaling; then each
// lists its bodies active at the common end and every rank evaluates, with or without active
// bodies of its own (the walks take the active ones alone: TreeForces::select_active). The
// cuts at a step's start balance the step's last, full evaluation. Cuts that balance the
// whole step (every evaluation's time, each body's interactions over its substeps, as
// GADGET-4 weighs bodies by their bins) measured the same at 134M on 2 H200s (77.8 % strong
// efficiency against 78.8 %), so they were not kept.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <optional>
#include <string>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/device_buffer.cuh"
#include "nbody/distributed.hpp"
#include "nbody/error.hpp"
#include "nbody/integrator.hpp"
#include "nbody/physics/timestep.hpp"
#include "simulation/cuda/block_step_kernels.cuh"
#include "simulation/cuda/cell_density.cuh"
#include "simulation/cuda/device_state_copies.cuh"
#include "tree/gpu_walk_options.hpp"

namespace nbody::cuda_resident {

/// The bins and the per-substep buffers of a DeviceStepper (Stepper; a friend: the step
/// uses its state, forces, collision stage and timing).
template <class Stepper>
class BlockSteps {
 public:
  /// Room for n bodies (the bin array stays empty, bins() nullptr, until called).
  void reserve(std::size_t n) {
    n = std::max<std::size_t>(n, 1);
    bin_.reserve(n, "time-step bins");
    active_.reserve(n, "active bodies");
    counts_.reserve(1, "substep counts");
    counts_host_.reserve(1);
    temp_.reserve(select_active_bytes(unsigned(n)), "active-body selection");
  }
  /// The bins (device, one byte a body), compacted along by the collision stage.
  [[nodiscard]] std::uint8_t* bins() const { return bin_.data(); }

  /// One step of dt (n > 0, or a decomposed run's rank); the caller adds dt to the time.
  void step(Stepper& s, double dt, bool potential) {
    const double eps = s.softening_;
    const bool dynamical = s.integrator_.timestep_criterion == TimestepCriterion::Dynamical;
    // The acceleration rule without softening takes its length from the potential; the
    // dynamical criterion its orbits' frequency |a|^2 / |phi|.
    const bool unsoftened = !(eps > 0) || dynamical;
    if (s.domain_ && s.accelerations_valid_) StateCopies::migrate(s);  // (else first_forces)
    if (!s.accelerations_valid_) s.first_forces(false, unsoftened);    // contacts: in the drift
    if (unsoftened) s.evaluate(true);  // the potentials alone, when stale
    s.potentials_valid_ = false;       // the bodies move
    if (dynamical) {
      omega2_.reserve(std::max<std::size_t>(s.n_, 1), "time-step densities");
      density_.compute(s.state(), s.dim_, s.G_, eps, omega2_.data(), s.stream_);
    }
    const BlockStepParams p{dt, s.integrator_.eta, eps, bin_limit(dt, s.integrator_.dt_min),
                            dynamical ? omega2_.data() : nullptr};
    cudaStream_t stream = s.stream_;
    SubstepCounts* counts = counts_.data();
    NBODY_CUDA_CHECK(cudaMemsetAsync(counts, 0, sizeof(SubstepCounts), stream));
    launch_assign_bins(s.state(), unsoftened ? s.phi_.data() : nullptr, bin_.data(), p, counts,
                       stream);
    finish_bookkeeping(s, 0);
    std::uint64_t tick = 0;
    bool potentials = false;
    // This step's last evaluation: its bodies and scaling, which a substep's refit keeps.
    struct Built {
      std::size_t n = 0;
      int position_exponent = 0, mass_exponent = 0;
    };
    std::optional<Built> built;
    while (tick < kTicksPerStep) {
      const SubstepCounts& c = *counts_host_.data();
      const std::uint64_t next = next_tick(c.bins, tick);
      if (next != c.next_tick || next <= tick || next > kTicksPerStep) {
        throw Error("device block steps: the next substep ends at tick " + std::to_string(next) +
                    " on the host, " + std::to_string(c.next_tick) + " on the device (tick " +
                    std::to_string(tick) + "): a bug");
      }
      const double h = exact_mul(dt, std::ldexp(double(next - tick), -kMaxTimestepBin));
      // With collisions the drift is split around them: bounces only between bodies of the
      // deepest bin, whose step the substep is, merges with the velocities at the stage's
      // time (as on the CPU: block_steps.cpp); merges compact the bins along.
      int deepest = kMaxTimestepBin;
      while (deepest > 0 && c.bins[deepest] == 0) --deepest;
      // As on the CPU (block_steps.cpp): a step below the time's resolution stops the run.
      check_step_during_run(s.time() + dt, std::ldexp(dt, -deepest), "--timestep adaptive",
                            "a --dt-min of at least that resolution keeps the steps above it");
      const std::size_t before = s.n_;
      if (s.collisions_) {
        launch_drift(s.state(), 0.5 * h, counts, stream);
        const bool merges = s.collisions_->model() == CollisionModel::Merge;
        if (merges) launch_move_velocities(s.state(), bin_.data(), dt, tick, next, 1.0, stream);
        s.collide(deepest);
        if (merges) launch_move_velocities(s.state(), bin_.data(), dt, tick, next, -1.0, stream);
        launch_drift(s.state(), 0.5 * h, counts, stream);
      } else {
        launch_drift(s.state(), h, counts, stream);
      }
      tick = next;
      unsigned n_active = c.n_active;
      if (s.n_ != before) n_active = select_again(s);
      // The new bins of this substep's active bodies: the densities at their positions.
      if (dynamical && tick < kTicksPerStep)
        density_.compute(s.state(), s.dim_, s.G_, eps, omega2_.data(), s.stream_);
      potentials = (tick == kTicksPerStep && potential) || unsoftened;
      if (n_active > 0 || s.domain_forces_) {  // collective where the ranks own their bodies
        // Every body active: the fixed step's full launch (the same kernels, the same bits).
        const bool all = n_active == s.n_;
        // Between this step's evaluations the bodies stay in their order unless merges
        // renumbered them: a substep refits the last one's tree (TreeForces::refit) while they
        // and their scaling are the same; the step's last substep (all active) builds anew.
        const Built now{s.n_, s.position_exponent_, s.mass_exponent_};
        s.forces_->allow_refit(refit_ && !all && !s.domain_forces_ && built && built->n == now.n &&
                               built->position_exponent == now.position_exponent &&
                               built->mass_exponent == now.mass_exponent);
        s.evaluate_forces(potentials, false, all ? nullptr : active_.data(), n_active, false);
        built = now;
        launch_finish_substep<typename Stepper::RealType>(
            s.state(), s.forces_->out(), active_.data(), n_active, s.G_, s.acceleration_scale(),
            s.potential_scale(), potentials ? s.phi() : nullptr, bin_.data(), p, tick,
            tick < kTicksPerStep, deepest, counts, stream);
      }
      finish_bookkeeping(s, tick);
      s.add_times_of_evaluations();
      // The next substep's scaling: this drift's extent, and the softening.
      double extent = 0;
      std::memcpy(&extent, &c.extent, sizeof extent);
      s.set_position_exponent(std::max(extent, std::isfinite(eps) ? std::abs(eps) : 0.0));
      s.times_.substeps += 1;
      s.times_.active_evaluations += s.domain_forces_ ? everyone_active_ : n_active;
    }
    // At tick kTicksPerStep every bin ends a step: every body has new forces.
    s.accelerations_valid_ = true;
    s.potentials_valid_ = potentials;
    const SubstepCounts& c = *counts_host_.data();
    s.times_.floored += c.floored;
    int deepest = kMaxTimestepBin;
    while (deepest > 0 && c.bins[deepest] == 0) --deepest;
    s.times_.bins.assign(c.bins, c.bins + deepest + 1);
  }

 private:
  /// The end of a substep at `tick` (0: the step's start): the bin histogram, the next
  /// substep's end and (before the step's end) the bodies active there, copied to the host
  /// in one piece; synchronises the stream.
  void finish_bookkeeping(Stepper& s, std::uint64_t tick) {
    const unsigned n = unsigned(s.n_);
    SubstepCounts* counts = counts_.data();
    launch_histogram(bin_.data(), n, tick, counts, s.stream_);
    const bool shared = s.domain_forces_ != nullptr;
    if (tick < kTicksPerStep && !shared) select(n, s.stream_);
    NBODY_CUDA_CHECK(cudaMemcpyAsync(counts_host_.data(), counts, sizeof(SubstepCounts),
                                     cudaMemcpyDeviceToHost, s.stream_));
    NBODY_CUDA_CHECK(cudaStreamSynchronize(s.stream_));
    if (!shared) return;
    SubstepCounts& c = *counts_host_.data();
    c = every_rank(*s.reducer_, c, tick);
    everyone_active_ = 0;  // the bodies of all ranks active at the next substep's end
    for (int k = 0; k <= kMaxTimestepBin; ++k)
      everyone_active_ += bin_active_at(k, c.next_tick) ? c.bins[k] : 0;
    if (tick == kTicksPerStep) return;
    // This rank's bodies active at the common end (the device's own next_tick was its bins').
    NBODY_CUDA_CHECK(cudaMemcpyAsync(&counts->next_tick, &c.next_tick, sizeof c.next_tick,
                                     cudaMemcpyHostToDevice, s.stream_));
    select(n, s.stream_);
    NBODY_CUDA_CHECK(cudaMemcpyAsync(&c.n_active, &counts->n_active, sizeof c.n_active,
                                     cudaMemcpyDeviceToHost, s.stream_));
    NBODY_CUDA_CHECK(cudaStreamSynchronize(s.stream_));
  }

  /// Collective: every rank's counts summed (bins, floored), the largest extent, and the
  /// next substep's end from the summed bins; n_active stays this rank's.
  static SubstepCounts every_rank(ForceReducer& comm, const SubstepCounts& mine,
                                  std::uint64_t tick) {
    ForceReducer::Bytes bytes(sizeof mine);
    std::memcpy(bytes.data(), &mine, sizeof mine);
    SubstepCounts all = mine;
    all.floored = 0;
    double extent = 0;
    std::fill(std::begin(all.bins), std::end(all.bins), 0u);
    for (const ForceReducer::Bytes& b : comm.all_gather(bytes)) {
      if (b.size() != sizeof(SubstepCounts))
        throw Error("device block steps: a rank sent malformed substep counts");
      SubstepCounts theirs;
      std::memcpy(&theirs, b.data(), sizeof theirs);
      for (int k = 0; k <= kMaxTimestepBin; ++k) all.bins[k] += theirs.bins[k];
      all.floored += theirs.floored;
      double e = 0;
      std::memcpy(&e, &theirs.extent, sizeof e);
      extent = std::max(extent, e);
    }
    std::memcpy(&all.extent, &extent, sizeof extent);
    all.next_tick = next_tick(all.bins, tick);
    return all;
  }

  /// The bodies active at the substep's end listed again after merges renumbered them;
  /// returns their number.
  unsigned select_again(Stepper& s) {
    select(unsigned(s.n_), s.stream_);
    unsigned n_active = 0;
    NBODY_CUDA_CHECK(cudaMemcpyAsync(&counts_host_.data()->n_active, &counts_.data()->n_active,
                                     sizeof n_active, cudaMemcpyDeviceToHost, s.stream_));
    NBODY_CUDA_CHECK(cudaStreamSynchronize(s.stream_));
    n_active = counts_host_.data()->n_active;
    return n_active;
  }

  void select(unsigned n, cudaStream_t stream) {
    const std::size_t bytes = select_active_bytes(n);
    temp_.reserve(bytes, "active-body selection");
    launch_select_active(bin_.data(), n, counts_.data(), active_.data(), temp_.data(), bytes,
                         stream);
  }

  /// NBODY_TREE_REFIT (1: refits between a step's builds; 0, unset: every substep builds).
  bool refit_ = tree_refit_from(std::getenv("NBODY_TREE_REFIT"));
  std::uint64_t everyone_active_ = 0;  // a decomposed run's: of every rank, at the next end
  gpu::DeviceBuffer<std::uint8_t> bin_;
  gpu::DeviceBuffer<unsigned> active_;
  gpu::DeviceBuffer<SubstepCounts> counts_;
  gpu::PinnedBuffer<SubstepCounts> counts_host_;
  gpu::DeviceBuffer<unsigned char> temp_;  // cub scratch
  DeviceCellDensity density_;              // the dynamical criterion's
  gpu::DeviceBuffer<double> omega2_;
};

}  // namespace nbody::cuda_resident
