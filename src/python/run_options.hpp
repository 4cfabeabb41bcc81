#pragma once
// The run options of nbody.Simulation (the options of `nbody run`): one table that gives
// the Python properties, the keyword arguments of Simulation(), load() and generate(), and
// sim.options. Values are checked by the library's own validate()/parse_*() functions, so
// a bad value raises the message `nbody run` prints for it.
#include <string>
#include <string_view>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include "nbody/ias15_first_step.hpp"
#include "nbody/simulation.hpp"

namespace nbody::python {

namespace nb = nanobind;

/// The Simulation's options (gravity, integrator, collisions) and the time step, which
/// the Simulation takes per step instead.
struct RunOptions : SimulationOptions {
  /// The step of step() and evolve(): dt, or for IAS15 (its first step's guess) REBOUND's
  /// default until dt is set, as `nbody run` without --dt.
  [[nodiscard]] double step() const {
    return dt_set || integrator.scheme != IntegratorScheme::Ias15 ? dt : kIas15FirstStep;
  }
  double dt = 0.01;
  bool dt_set = false;  // sim.dt (or dt=) given
};

/// Throws nbody::Error (the CLI's message) for the first bad option. dim is the
/// system's dimension (the tree needs 2 or 3).
void validate(const RunOptions& options, int dim);

/// One run option as the Python side sees it.
struct OptionSpec {
  const char* name;
  const char* doc;
  nb::object (*get)(const RunOptions&);
  void (*set)(RunOptions&, nb::handle);  // converts; raises TypeError for a wrong type
  bool reconfigures = true;              // goes to Simulation::reconfigure() (all but dt)
};

/// Every run option, in the order `nbody run --help` lists them.
[[nodiscard]] const std::vector<OptionSpec>& option_specs();
[[nodiscard]] const OptionSpec* find_option(std::string_view name);
/// "G, softening, dt, ..." for error messages.
[[nodiscard]] std::string option_names();

/// Applies keyword arguments to options. Names in `skip` are left for the caller; any
/// other unknown name raises TypeError("CALLER got an unexpected keyword argument 'NAME'
/// (run options: ...)").
void apply_keywords(RunOptions& options, const nb::dict& kwargs, const char* caller,
                    const std::vector<std::string>& skip = {});

/// {name: value} of every option.
[[nodiscard]] nb::dict options_dict(const RunOptions& options);

}  // namespace nbody::python
