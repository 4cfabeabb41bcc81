#pragma once
// The end of `nbody run`: the human summary, the per-stage timing table and the JSON object.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/run/run_args.hpp"
#include "nbody/diagnostics.hpp"
#include "nbody/energy_choice.hpp"
#include "nbody/simulation.hpp"

namespace nbody::cli {

struct RunResult {
  std::size_t n_start = 0;  // bodies at the start (merges may remove some)
  std::uint64_t steps = 0;  // taken by this invocation
  double wall_seconds = 0;
  double initial_energy = 0;
  Diagnostics end;
  EnergyChoice energy;                // the energy method, its reason, cost and error
  std::vector<std::string> warnings;  // printed as `nbody: warning: ...` and in the JSON
};

/// The header's integrator part: the scheme, dt, the bins and criterion of adaptive steps, or
/// IAS15's settings (whose steps are its own: until --t-end when `until_time`); `steps` of
/// this invocation.
[[nodiscard]] std::string stepping_text(const RunArgs& args, const Simulation& sim, bool until_time,
                                        std::uint64_t steps);
/// The closing lines (energy, momenta, collisions, timings) on `human`.
void print_run_summary(std::FILE* human, const RunArgs& args, Simulation& sim,
                       const RunResult& result);
/// The JSON object of --json on stdout (docs/json.md).
void print_run_json(const RunArgs& args, Simulation& sim, const RunResult& result);

}  // namespace nbody::cli
