#pragma once
// Shared by the GPU tests of hierarchical time steps (test_block_steps*_cuda.cpp,
// test_active_forces_cuda.cpp): Plummer spheres, adaptive options, and runs of a stepper
// with their bins per step.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backend_test.hpp"
#include "nbody/distributed.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/simulation.hpp"
#include "simulation/stepper.hpp"

namespace nbody::block_steps_test {

inline constexpr double kDt = 0.05;
inline constexpr int kSteps = 5;
inline constexpr double kSoftening = 0.01;

inline ParticleSystem plummer(std::size_t n, std::uint64_t seed, int dim = 3) {
  ModelOptions m;
  m.model = "plummer";
  m.n = n;
  m.seed = seed;
  m.dim = dim;
  ParticleSystem ps = generate(m);
  if (dim == 2) ps.make_planar();
  return ps;
}

inline std::string text(const std::vector<std::uint64_t>& bins) {
  std::string s = "[";
  for (std::size_t k = 0; k < bins.size(); ++k) s += (k ? ", " : "") + std::to_string(bins[k]);
  return s + "]";
}

inline SimulationOptions adaptive_options(Device device, GravityAlgorithm algorithm,
                                          Precision precision, double softening,
                                          double eta = 0.025) {
  SimulationOptions o = test::simulation_options(device, algorithm, precision, softening);
  o.integrator.timestep = TimestepMode::Adaptive;
  o.integrator.eta = eta;
  return o;
}

struct StepRun {
  ParticleSystem end;
  std::vector<std::vector<std::uint64_t>> bins;  // per step
  std::vector<std::size_t> sizes;                // N after each step
  std::uint64_t substeps = 0, active = 0, floored = 0;
};

/// `steps` steps of dt by the stepper the options ask for (the last one asked for the
/// potentials when `potential_last`), its statistics per step.
inline StepRun run_stepper(const ParticleSystem& start, const SimulationOptions& options, int steps,
                           double dt, bool potential_last = false,
                           std::shared_ptr<ForceReducer> reducer = nullptr) {
  StepRun r;
  r.end = start;
  std::unique_ptr<Stepper> stepper =
      make_stepper(complete_options(options, start.dim), std::move(reducer));
  stepper->upload(r.end);
  for (int s = 0; s < steps; ++s) {
    stepper->step(dt, potential_last && s + 1 == steps);
    const StepTimes t = stepper->take_times();
    r.bins.push_back(t.bins);
    r.sizes.push_back(stepper->size());
    r.substeps += t.substeps;
    r.active += t.active_evaluations;
    r.floored += t.floored;
  }
  stepper->download(r.end);
  stepper.reset();
  return r;
}

/// The largest |position difference| over the bodies, relative to the largest |coordinate|.
inline double position_difference(const ParticleSystem& a, const ParticleSystem& b) {
  double worst = 0, extent = 0;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    worst = std::max(
        {worst, std::abs(a.x[i] - b.x[i]), std::abs(a.y[i] - b.y[i]), std::abs(a.z[i] - b.z[i])});
    extent = std::max({extent, std::abs(b.x[i]), std::abs(b.y[i]), std::abs(b.z[i])});
  }
  return extent > 0 ? worst / extent : worst;
}

inline SimulationOptions tree_adaptive(Device d) {
  SimulationOptions o = adaptive_options(d, GravityAlgorithm::Tree, Precision::Float, kSoftening);
  o.gravity.theta = 0.5;
  return o;
}

}  // namespace nbody::block_steps_test
