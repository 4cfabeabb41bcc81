// What a run did so far: sim.timings(), sim.collision_stats(), sim.timestep_stats().
#include <string>

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "nbody/collisions.hpp"
#include "nbody/integrator.hpp"
#include "nbody/phase_times.hpp"
#include "nbody/simulation.hpp"
#include "python/bindings.hpp"

namespace nbody::python {

void bind_run_stats(SimulationClass& cls) {
  cls.def(
      "timings",
      [](PySimulation& sim) {
        PySimulation::Busy busy(sim);
        const PhaseTimes times = sim.times();
        nb::dict out;
        for (const auto& [phase, seconds] : times.entries()) out[phase.c_str()] = seconds;
        return out;
      },
      "Seconds spent so far per phase: gravity, integrate, collisions, diagnostics.");
  cls.def(
      "collision_stats",
      [](PySimulation& sim) {
        PySimulation::Busy busy(sim);
        const CollisionTotals t = sim.collision_totals();
        nb::dict out;
        out["stages"] = t.stages;
        out["contacts"] = t.contacts;
        out["merges"] = t.merges;
        out["max_overlap"] = t.max_overlap_last;
        out["energy_lost"] = t.energy_lost;
        out["seconds"] = t.seconds;
        return out;
      },
      "Collision totals so far: stages, contacts, merges, max_overlap (latest stage), energy_lost, "
      "seconds.");

  cls.def(
      "timestep_stats",
      [](PySimulation& sim) {
        PySimulation::Busy busy(sim);
        const TimestepStats& t = sim.timestep_stats();
        nb::dict out;
        out["mode"] = std::string(to_string(sim.options().integrator.timestep));
        out["substeps"] = t.substeps;
        out["force_evaluations"] = t.force_evaluations;
        out["force_evaluations_per_body"] =
            sim.size() > 0 ? double(t.force_evaluations) / double(sim.size()) : 0.0;
        out["bins"] = t.bins;
        out["floored"] = t.floored;
        if (sim.options().integrator.scheme == IntegratorScheme::Ias15) {
          out["steps"] = t.steps;
          out["rejected_steps"] = t.rejected;
          out["iterations"] = t.iterations;
          out["dt_last"] = t.dt_last;
          out["dt_min"] = t.dt_min;
          out["dt_max"] = t.dt_max;
        }
        return out;
      },
      "What the time steps so far did: mode, substeps (force evaluations), force_evaluations "
      "(bodies given new forces, summed), force_evaluations_per_body, bins (adaptive: bodies per "
      "bin k, step dt/2^k, at the end of the last step), floored (adaptive: body steps that "
      "wanted less than dt_min); with IAS15 also steps (accepted), rejected_steps, iterations "
      "(predictor-corrector), dt_last, dt_min, dt_max.");
}

}  // namespace nbody::python
