// nbody.Simulation's stepping: step(count) and evolve(t, outputs...), with the GIL
// released and Ctrl-C polled between steps; evolve's outputs are run_outputs.hpp's.
#include <chrono>
#include <filesystem>
#include <limits>
#include <string>

#include <fmt/format.h>
#include <nanobind/stl/filesystem.h>

#include "nbody/input_error.hpp"
#include "python/bindings.hpp"
#include "python/checks.hpp"
#include "python/run_outputs.hpp"

namespace nbody::python {

using namespace nb::literals;

namespace {
/// Polled between steps with the GIL released: every 50 ms it takes the GIL and lets
/// Python run its signal handlers, so Ctrl-C stops a long step(k) or evolve(t) after the
/// step in progress.
class InterruptPoll {
 public:
  bool operator()() {
    const auto now = std::chrono::steady_clock::now();
    if (now < next_) return true;
    next_ = now + std::chrono::milliseconds(50);
    nb::gil_scoped_acquire gil;
    interrupted_ = PyErr_CheckSignals() != 0;
    return !interrupted_;
  }
  /// Raises the pending Python exception (KeyboardInterrupt) if a poll saw one.
  void raise_if_interrupted() const {
    if (interrupted_) throw nb::python_error();
  }

 private:
  std::chrono::steady_clock::time_point next_ = std::chrono::steady_clock::now();
  bool interrupted_ = false;
};

/// step()'s count: an int (not a bool, not a float) from 0 to 2^64 - 1.
std::uint64_t step_count(nb::handle value) {
  if (nb::isinstance<nb::bool_>(value) || !PyIndex_Check(value.ptr())) {
    throw nb::type_error(
        fmt::format("step(): count expects an integer, got {}", nb::type_name(value.type()).c_str())
            .c_str());
  }
  nb::object index = nb::steal(PyNumber_Index(value.ptr()));
  if (!index) throw nb::python_error();
  std::uint64_t count = 0;
  if (!nb::try_cast(index, count)) {
    const std::string text = printable(nb::cast<std::string>(nb::repr(index)));
    throw nb::value_error(
        (text[0] == '-' ? fmt::format("step({}): the number of steps must be >= 0", text)
                        : fmt::format("step({}): the number of steps must be below 2^64", text))
            .c_str());
  }
  return count;
}

}  // namespace

void bind_stepping(SimulationClass& cls) {
  // ---- Stepping (GIL released) -------------------------------------------------------
  cls.def(
      "step",
      [](PySimulation& sim, nb::handle count_value) {
        const std::uint64_t count = step_count(count_value);
        PySimulation::Busy busy(sim);
        InterruptPoll poll;
        {
          nb::gil_scoped_release release;
          sim.step(count, [&poll] { return poll(); });
        }
        poll.raise_if_interrupted();
      },
      "count"_a = 1,
      "Advances by count steps of size dt. Releases the GIL (other Python threads run meanwhile); "
      "Ctrl-C "
      "stops after the step in progress.");
  cls.def(
      "evolve",
      [](PySimulation& sim, double t, const std::filesystem::path& output_dir, double snapshot_dt,
         nb::handle snapshot_every, nb::handle stats_every, nb::handle checkpoint_every,
         nb::handle checkpoint_keep) {
        PySimulation::Busy busy(sim);
        const auto count = [](nb::handle v, const char* name, std::uint64_t least) {
          return count_value(v, "evolve()", name, least);
        };
        const std::uint64_t keep = count(checkpoint_keep, "checkpoint_keep", 1);
        if (keep > std::numeric_limits<unsigned>::max())
          throw input_error("checkpoint_keep", "must be at most 2^32 - 1", keep);
        const OutputRequest request{output_dir,
                                    snapshot_dt,
                                    count(snapshot_every, "snapshot_every", 0),
                                    count(stats_every, "stats_every", 0),
                                    count(checkpoint_every, "checkpoint_every", 0),
                                    unsigned(keep)};
        validate(request);
        InterruptPoll poll;
        if (!request.any()) {
          nb::gil_scoped_release release;
          sim.evolve(t, [&poll] { return poll(); });
        } else {
          if (t != sim.time()) sim.check_evolve(t);  // before any file is written
          // The steps land on every snapshot time: as many as the run can count (2^53, the
          // command line's limit on steps), each one advancing the time.
          const double snapshots = (t - sim.time()) / snapshot_dt;
          if (snapshot_dt > 0 && t > sim.time() &&
              (!(snapshots <= 9007199254740992.0) || t + snapshot_dt == t)) {
            throw input_error("snapshot_dt",
                              fmt::format("too small to reach t = {}: the steps land on each of "
                                          "its {:.3g} snapshot times",
                                          printable(t), snapshots),
                              snapshot_dt);
          }
          if (!sim.outputs || !(sim.outputs->request() == request)) {
            sim.outputs = std::make_shared<RunOutputs>(sim, request);
          }
          RunOutputs& out = *sim.outputs;
          out.take_options();
          nb::gil_scoped_release release;
          sim.set_after_step([&out] { out.after_step(); });
          try {
            bool going = true;
            while (going && sim.time() < t) {
              sim.evolve(out.next_stop(t), [&poll, &going] { return going = poll(); });
            }
          } catch (...) {
            sim.set_after_step(nullptr);
            throw;
          }
          sim.set_after_step(nullptr);
        }
        poll.raise_if_interrupted();
      },
      "t"_a, nb::kw_only(), "output_dir"_a = ".", "snapshot_dt"_a = 0.0, "snapshot_every"_a = 0,
      "stats_every"_a = 0, "checkpoint_every"_a = 0, "checkpoint_keep"_a = 2,
      "Steps of size dt until the time is exactly t (the last step shortened to land on it, as "
      "`nbody run --t-end`). Releases the GIL. Outputs as `nbody run` writes them, in "
      "output_dir: snapshot_dt (simulated time between HDF5 snapshots snapshot_NNNN.hdf5; the "
      "steps land on those times) or snapshot_every (steps), stats_every (steps between rows of "
      "energy.csv), checkpoint_every (steps between checkpoint_<step>.h5, the newest "
      "checkpoint_keep kept). Snapshot 0 and the first row are written at the start; later "
      "calls with the same outputs continue the series.");
}

}  // namespace nbody::python
