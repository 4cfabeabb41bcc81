#pragma once
// What `--energy auto` stands for in a run with a known plan: the most accurate method
// whose planned evaluations cost a small share of the run's steps (docs/energy.md).
#include <cstdint>
#include <string>

#include "nbody/diagnostics.hpp"
#include "nbody/gravity.hpp"

namespace nbody {

/// The share of the steps' time the planned energy evaluations may take. The progress
/// line's own energies (src/cli/progress.cpp) keep under ~2.5% of the wall time besides.
inline constexpr double kEnergyCostBudget = 0.075;

/// What a run will ask of its energies, known before its first step.
struct EnergyPlan {
  GravityAlgorithm algorithm = GravityAlgorithm::Direct;
  Device device = Device::Cpu;
  Precision precision = Precision::Double;  // resolved (resolve_precision)
  double G = 1;
  std::size_t n = 0;
  std::uint64_t steps = 0;        // the steps of the whole run from step 0; 0 when not known
  std::uint64_t evaluations = 2;  // energies read: the start, the end, --every, --stats-every
};

/// A method with what it is expected to cost and how far its drift can be trusted.
struct EnergyChoice {
  EnergyMethod method = EnergyMethod::Exact;
  /// One evaluation's cost in steps of the run's solver (an estimate, docs/energy.md).
  double cost_in_steps = 0;
  /// The planned evaluations' cost as a share of the steps' time (estimate).
  double cost_share = 0;
  /// The typical error of the reported |dE/E| that comes from how W is computed (not
  /// from the integration): rounding for the exact sum, the approximation for a tree.
  double drift_error = 0;
  /// One line for the run header: what was chosen and why.
  std::string reason;
};

/// The evaluation cost (in steps) and drift error of `method` for this plan.
[[nodiscard]] EnergyChoice describe_energy_method(EnergyMethod method, const EnergyPlan& plan);

/// Auto: the first of exact, tree (CPU runs of the tree solver) and solver whose planned
/// evaluations fit kEnergyCostBudget, else solver (always cheap: its potentials come with
/// the forces); the direct sum in float64 takes solver, which is then the exact W. Without
/// gravity: solver (W = 0). Any other method is described, not changed.
[[nodiscard]] EnergyChoice choose_energy_method(EnergyMethod requested, const EnergyPlan& plan);

}  // namespace nbody
