// --energy auto by the run's plan. The costs are estimates in steps of the run's own
// solver, measured on a 2-core VM with Plummer spheres (docs/energy.md has the table);
// they are rounded up, so that auto errs towards the cheaper method.
#include "nbody/energy_choice.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace nbody {

namespace {

/// One exact pair sum (each pair once, float64) in steps of the solver.
double exact_cost(const EnergyPlan& p) {
  const double n = double(p.n);
  if (p.algorithm == GravityAlgorithm::Direct) {
    // the step's N^2 pairs against N^2/2 float64 pairs at a third of the force kernel's rate
    // (float forces: a sixth; the GPU's float kernel against its float64 pair sum: ~1/25)
    if (p.precision == Precision::Double) return 2.5;
    return p.device == Device::Gpu ? 25.0 : 8.0;
  }
  // the tree: ~N/900 on the CPU at N = 1e4-6e4 (a float32 step with the relative
  // criterion); on an H100 the float64 pair sum took 8, 51 and 415 float tree steps at
  // N = 6e4, 2.6e5 and 1e6 (Plummer, eps 0.01): N/2500 is at or above each
  return std::max(1.0, n / (p.device == Device::Gpu ? 2500.0 : 700.0));
}

/// One float64 quadrupole tree at kTreeEnergyTheta in steps of the solver (on the GPU the
/// device's own tree, device_tree_energy.cuh: on an H100 5, 10 and 21 float tree steps at
/// N = 6e4, 2.6e5 and 1e6, Plummer, eps 0.01; 6 sqrt(N / 6e4) is at or above each).
double tree_cost(const EnergyPlan& p) {
  const double n = std::max(double(p.n), 1e4);
  const double cpu_tree_steps = 7.0 + 2.0 * std::log2(n / 1e4);  // 7 at 1e4, 12 at 6e4, 16 at 2e5
  if (p.device == Device::Gpu) {
    const double gpu_tree_steps = 6.0 * std::sqrt(n / 6e4);
    return p.algorithm == GravityAlgorithm::Tree ? gpu_tree_steps : 0.1 * gpu_tree_steps;
  }
  if (p.algorithm == GravityAlgorithm::Direct) return 0.1 * cpu_tree_steps;
  return cpu_tree_steps;
}

}  // namespace

EnergyChoice describe_energy_method(EnergyMethod method, const EnergyPlan& p) {
  EnergyChoice c;
  c.method = method;
  const bool no_gravity = p.algorithm == GravityAlgorithm::None || p.G == 0;
  switch (method) {
    case EnergyMethod::Exact:
      c.cost_in_steps = no_gravity ? 0.0 : exact_cost(p);
      c.drift_error = 1e-13;  // float64 rounding of an ordered sum
      break;
    case EnergyMethod::Tree:
      c.cost_in_steps = no_gravity ? 0.0 : tree_cost(p);
      c.drift_error = 1e-6;  // theta 0.25, quadrupoles, float64: 2e-7 to 1e-6 measured
      break;
    case EnergyMethod::Solver:
      // the potentials come in the force pass of a step that computes forces anyway
      c.cost_in_steps = 0.1;
      if (no_gravity) {
        c.drift_error = 0;
      } else if (p.algorithm == GravityAlgorithm::Direct) {
        c.drift_error = p.precision == Precision::Double ? 1e-13 : 2e-7;  // float32: 5e-8 measured
      } else {
        c.drift_error = 1e-4;  // the float32 tree's potentials: 3e-5 to 2e-4 measured
      }
      break;
    default:
      c.cost_in_steps = 0;
      c.drift_error = 0;
  }
  c.cost_share = p.steps > 0 ? double(p.evaluations) * c.cost_in_steps / double(p.steps) : 0.0;
  return c;
}

namespace {

EnergyChoice choose_auto(const EnergyPlan& p);

}  // namespace

EnergyChoice choose_energy_method(EnergyMethod requested, const EnergyPlan& p) {
  EnergyChoice c = choose_auto(p);
  if (requested == EnergyMethod::Auto || requested == c.method) return c;  // the same words
  const EnergyMethod preferred = c.method;
  c = describe_energy_method(requested, p);
  c.reason = fmt::format("as asked (--energy; auto: {}), ~{:.3g}% of {} steps",
                         to_string(preferred), 100 * c.cost_share, p.steps);
  return c;
}

namespace {

EnergyChoice choose_auto(const EnergyPlan& p) {
  const bool no_gravity = p.algorithm == GravityAlgorithm::None || p.G == 0;
  if (no_gravity) {
    EnergyChoice c = describe_energy_method(EnergyMethod::Solver, p);
    c.reason = "no gravity: W = 0";
    return c;
  }
  if (p.algorithm == GravityAlgorithm::Direct && p.precision == Precision::Double) {
    EnergyChoice c = describe_energy_method(EnergyMethod::Solver, p);
    c.reason = "the direct sum's own float64 potentials: the exact W with the forces";
    return c;
  }
  auto fits = [&](const EnergyChoice& c) {
    return p.steps > 0 && c.cost_share <= kEnergyCostBudget;
  };
  const EnergyChoice exact = describe_energy_method(EnergyMethod::Exact, p);
  const auto plan = [&](const EnergyChoice& c) {
    return fmt::format("{} evaluations ~ {:.2g}% of {} steps", p.evaluations, 100 * c.cost_share,
                       p.steps);
  };
  if (fits(exact)) {
    EnergyChoice c = exact;
    c.reason = fmt::format("exact pair sum: {}", plan(c));
    return c;
  }
  const EnergyChoice tree = describe_energy_method(EnergyMethod::Tree, p);
  if (p.algorithm == GravityAlgorithm::Tree && fits(tree)) {
    EnergyChoice c = tree;
    c.reason = fmt::format("float64 quadrupole tree, |dE/E| error ~{:.0e}: {} (exact: ~{:.2g}%)",
                           c.drift_error, plan(c), 100 * exact.cost_share);
    return c;
  }
  EnergyChoice c = describe_energy_method(EnergyMethod::Solver, p);
  const EnergyChoice& accurate = p.algorithm == GravityAlgorithm::Tree ? tree : exact;
  c.reason = fmt::format(
      "the solver's own potentials, |dE/E| error ~{:.0e}: an accurate energy (--energy {}) "
      "would take ~{:.3g}% of {} steps",
      c.drift_error, to_string(accurate.method), 100 * accurate.cost_share, p.steps);
  return c;
}

}  // namespace

}  // namespace nbody
