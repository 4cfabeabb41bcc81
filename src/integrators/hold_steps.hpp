#pragma once
// The momentum-conserving hierarchical scheme (--timestep hierarchical): HOLD, Pelupessy,
// Jaenes & Portegies Zwart (2012), "N-body integrators with individual time steps from
// Hierarchical splitting", New Astronomy 17, 711; the splitting of GADGET-4's hierarchical
// time integration (Springel et al. 2021, MNRAS 506, 2871, sec. 4.2).
//
// Each body takes a power-of-two bin k (step dt / 2^k) from its acceleration at the start
// of the step, as --timestep adaptive does (physics/timestep.hpp). Level k holds the bodies
// of bins >= k; its slow part S_k is bin k, its fast part F_k the deeper bins. Its
// Hamiltonian splits as H_k = (T_S + V_SS + V_SF) + H_{k+1}, and one step h of it is
//
//   kick(V_SS + V_SF, h/2)   drift(S_k, h) with two steps h/2 of H_{k+1}   kick(V_SS + V_SF, h/2)
//
// where the kick gives every pair with at least one slow body its force, to both bodies,
// for the same time: every interaction is a pair of equal and opposite impulses, so the
// total momentum is kept to rounding (the direct sum; the tree's forces are not pairwise).
// The interactions of a pair are integrated with the step of its slower body. A level's
// kick forces come from the run's solver on the level's bodies as a system of their own
// with S_k active and F_k type-1 test particles (test_particle_gravity.hpp: S on S and F
// on S by the solver and the direct sum, S on F by the direct sum). A closing kick and the
// next opening kick of a level share one evaluation; at the end of the step the levels'
// last forces sum to every body's acceleration from all bodies (the next step's bins).
//
// With every body in bin 0 this is the fixed-step leapfrog, bit for bit.
#include <cstdint>
#include <vector>

#include "integrators/block_steps.hpp"
#include "nbody/gravity.hpp"
#include "nbody/integrator.hpp"
#include "nbody/particles.hpp"

namespace nbody {

class HoldSteps {
 public:
  HoldSteps(const IntegratorOptions& options, const GravityOptions& gravity);
  /// Advances ps by dt with `solver` (which takes test particles: make_gravity_solver's),
  /// adding to `counts` (substeps: the levels' force evaluations; active_evaluations: their
  /// bodies, summed). The state's accelerations must be current (the bins come from
  /// them; without softening the potentials too); at the end they are, and the potentials
  /// with `potential` (always without softening).
  void step(ParticleSystem& ps, double dt, bool potential, GravitySolver& solver,
            BlockStepCounts& counts);

 private:
  void assign_bins(const ParticleSystem& ps, double dt, BlockStepCounts& counts);
  /// Level k's forces at the current positions into level_[k] (none when S_k is empty).
  void evaluate(const ParticleSystem& ps, int k, bool potential, GravitySolver& solver,
                BlockStepCounts& counts);
  void kick(ParticleSystem& ps, int k, double h) const;
  void evolve(ParticleSystem& ps, int k, double h, bool at_end, GravitySolver& solver,
              BlockStepCounts& counts);

  double eta_, dt_min_, softening_;
  bool potential_ = false;  // this step's last evaluations compute the potentials
  std::vector<int> bin_;
  int deepest_ = 0;
  // Per level k: its bodies (S_k first, then F_k) as a system of their own with their
  // forces, and which body of the state each one is.
  std::vector<ParticleSystem> level_;
  std::vector<std::vector<std::uint32_t>> member_;
  std::vector<std::size_t> slow_;  // |S_k|
};

}  // namespace nbody
