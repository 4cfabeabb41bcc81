#pragma once
// The pieces of the nbody._nbody module, one file each (module.cpp puts them together).
#include <nanobind/nanobind.h>

#include "python/py_simulation.hpp"

namespace nbody::python {

namespace nb = nanobind;

using SimulationClass = nb::class_<PySimulation>;

/// nbody.Simulation: construction, options, stepping, measures (simulation_binding.cpp).
void bind_simulation(nb::module_& m);
/// step(), evolve() with its outputs (stepping_binding.cpp).
void bind_stepping(SimulationClass& cls);
/// sim.timings(), collision_stats(), timestep_stats() (run_stats_binding.cpp).
void bind_run_stats(SimulationClass& cls);
/// sim.x ... sim.ids, positions, velocities, accelerations(), add(), remove()
/// (body_arrays_binding.cpp).
void bind_body_arrays(SimulationClass& cls);
/// add(), particles, move_to_com(): python/nbody/_api.py (python_api_binding.cpp).
void bind_python_api(SimulationClass& cls);
/// n_active, testparticle_type (test_particles_binding.cpp).
void bind_test_particles(SimulationClass& cls);
/// save_checkpoint(), load_checkpoint() (checkpoint_binding.cpp).
void bind_checkpoints(nb::module_& m, SimulationClass& cls);
/// load(), generate(), formats(), models(), sim.save() (io_binding.cpp).
void bind_io(nb::module_& m, SimulationClass& cls);

/// A new Python Simulation owning ps, with run options from keyword arguments (names in
/// `skip` are the caller's own). `caller` names the function in TypeErrors.
[[nodiscard]] nb::object make_simulation(ParticleSystem ps, const nb::dict& options,
                                         const char* caller,
                                         const std::vector<std::string>& skip = {});

}  // namespace nbody::python
