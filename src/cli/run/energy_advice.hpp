#pragma once
// The energy of `nbody run`: the choice of --energy auto by the run's plan, and the warning
// of a run whose energy error passed --energy-tolerance, with the options that would help.
#include <cstdint>
#include <string>
#include <vector>

#include "cli/run/run_args.hpp"
#include "nbody/energy_choice.hpp"
#include "nbody/simulation.hpp"

namespace nbody::cli {

/// The run's energy method: --energy as given, or auto chosen by the plan (the whole run
/// from step 0 to last_step, so a restart to the same end chooses the same), set on `sim`.
/// last_step 0: the number of steps is not known ahead (IAS15 until a time). A restart
/// (checkpoint_parameters: the checkpoint's used_parameters text) keeps the method its run
/// chose, so that E0 and the energies after it come from one method.
EnergyChoice choose_run_energy(const RunArgs& a, Simulation& sim, std::uint64_t last_step,
                               const std::string* checkpoint_parameters);

/// The used_parameters text with `energy = "auto"` replaced by the method chosen, so that
/// used_parameters.toml and checkpoints say what the run used.
[[nodiscard]] std::string with_chosen_energy(std::string parameters, EnergyMethod chosen);

/// The warnings of a finished run: one when |dE/E| (with collisions |d(E + lost)/E|) passed
/// --energy-tolerance, naming the options that would help this run. Empty otherwise.
[[nodiscard]] std::vector<std::string> energy_warnings(const RunArgs& a, Simulation& sim,
                                                       double initial_energy,
                                                       const Diagnostics& end);

}  // namespace nbody::cli
