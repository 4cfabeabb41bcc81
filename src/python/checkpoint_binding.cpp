// Checkpoints from Python: sim.save_checkpoint(path) and nbody.load_checkpoint(path), the
// files of `nbody run --checkpoint-every` / `--restart` (nbody/snapshot.hpp): the exact
// state (a restarted run goes on bit for bit), the steps done, E0, the collision totals,
// IAS15's state, and the run options (as used_parameters.toml lines, which load_checkpoint
// reads back).
#include <filesystem>

#include <fmt/format.h>
#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/string.h>

#include "cli/run/run_files.hpp"
#include "nbody/input_error.hpp"
#include "nbody/snapshot.hpp"
#include "python/bindings.hpp"
#include "python/checks.hpp"
#include "python/errors.hpp"
#include "python/run_outputs.hpp"
#include "python/saved_options.hpp"

namespace nbody::python {

using namespace nb::literals;

void bind_checkpoints(nb::module_& m, SimulationClass& cls) {
  cls.def(
      "save_checkpoint",
      [](PySimulation& sim, const std::filesystem::path& path) {
        PySimulation::Busy busy(sim);
        if (path.empty()) throw input_error("path", "is empty: name a file");
        if (sim.size() == 0)
          throw input_error(path.string(), "not written: the simulation has no bodies");
        sim.check_bodies();
        if (sim.outputs) sim.outputs->take_options();
        CheckpointState state =
            sim.outputs ? sim.outputs->checkpoint_state()
                        : checkpoint_state(sim, parameters_toml(sim.options()), nullptr);
        with_file_errors([&] {
          nb::gil_scoped_release release;
          write_checkpoint(path, state);
        });
      },
      "path"_a,
      "Writes a checkpoint (HDF5, as `nbody run --checkpoint-every`): the exact state, the "
      "steps done, the energy at the start, collision totals, IAS15's state and the run "
      "options. nbody.load_checkpoint(path) (or `nbody run --restart path`) continues it "
      "bit for bit.");

  m.def(
      "load_checkpoint",
      [](const std::filesystem::path& given, nb::kwargs options) {
        if (given.empty()) throw input_error("path", "is empty: name a file or folder");
        std::filesystem::path path = given;
        if (std::filesystem::is_directory(given)) {  // the newest checkpoint in it
          const auto latest = cli::latest_checkpoint(given);
          if (!latest)
            raise_file_error(
                fmt::format("{}: no checkpoint_<step>.h5 in this folder", given.string()).c_str());
          path = *latest;
        }
        CheckpointState state = with_file_errors([&] {
          nb::gil_scoped_release release;
          return read_checkpoint(path);
        });
        RunOptions run;
        with_file_errors(
            [&] { apply_parameters_toml(run, state.parameters, printable(path.string())); });
        apply_keywords(run, options, "load_checkpoint()");
        auto* sim = new PySimulation(state.particles, run);
        nb::object owner = nb::cast(sim, nb::rv_policy::take_ownership);
        sim->resume(state);
        return owner;
      },
      "path"_a, "options"_a,
      "A Simulation from a checkpoint (a file, or a folder: its newest checkpoint_<step>.h5), "
      "with the run options it was written with; keyword options override them. Its next "
      "evolve() with the same outputs continues the snapshot numbering and the energy log.");
}

}  // namespace nbody::python
