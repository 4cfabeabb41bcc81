// Files and generated models: nbody.load(), sim.save(), nbody.generate(), and the names
// they accept (formats(), models()).
#include <cmath>
#include <filesystem>
#include <string>
#include <type_traits>

#include <fmt/format.h>
#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "nbody/initial_conditions.hpp"
#include "nbody/input_error.hpp"
#include "nbody/io.hpp"
#include "nbody/snapshot.hpp"
#include "nbody/snapshot_parameters.hpp"
#include "python/bindings.hpp"
#include "python/checks.hpp"
#include "python/errors.hpp"
#include "python/run_options.hpp"
#include "python/saved_options.hpp"

namespace nbody::python {

using namespace nb::literals;

namespace {

/// The model options of `nbody gen` (ModelOptions), by keyword. G is shared with the run
/// options (the model's velocities are set up for the simulation's G).
struct ModelField {
  const char* name;
  void (*set)(ModelOptions&, nb::handle);
};

template <class T>
T model_value(nb::handle value, const char* name) {
  T v{};
  if (nb::isinstance<nb::bool_>(value) || !nb::try_cast(value, v)) {
    if (PyLong_Check(value.ptr())) {  // an int, but too large for T
      throw input_error(name,
                        std::is_floating_point_v<T> ? "is beyond the range of a float64"
                                                    : "is beyond the range of a 32-bit integer",
                        nb::cast<std::string>(nb::repr(value)));
    }
    throw nb::type_error(fmt::format("generate(): {} expects a number, got {}", name,
                                     nb::type_name(value.type()).c_str())
                             .c_str());
  }
  // Every model option is a finite number; a model that does not use one would otherwise
  // take nan or inf without a word. (G is a run option too: its checks give the CLI's
  // messages.)
  if constexpr (std::is_floating_point_v<T>) {
    if (!std::isfinite(v) && std::string_view(name) != "G")
      throw input_error(name, "must be finite", v);
  }
  return v;
}

/// An empty path would be read as the current folder ("cannot open file ''").
void check_path(const std::filesystem::path& path, const std::string& format) {
  if (path.empty()) throw input_error("path", "is empty: name a file");
  if (format.empty())
    throw input_error("format", "is empty: give 'auto' or one of nbody.formats()");
}

#define NBODY_MODEL_FIELD(NAME, MEMBER, TYPE)                                          \
  ModelField {                                                                         \
    NAME, [](ModelOptions& o, nb::handle v) { o.MEMBER = model_value<TYPE>(v, NAME); } \
  }

const ModelField kModelFields[] = {
    NBODY_MODEL_FIELD("G", G, double),
    NBODY_MODEL_FIELD("radius", radius, double),
    NBODY_MODEL_FIELD("mass", mass, double),
    NBODY_MODEL_FIELD("size", size, double),
    NBODY_MODEL_FIELD("velocity", velocity, double),
    NBODY_MODEL_FIELD("e", e, double),
    NBODY_MODEL_FIELD("a", a, double),
    NBODY_MODEL_FIELD("separation", separation, double),
    NBODY_MODEL_FIELD("impact", impact, double),
    NBODY_MODEL_FIELD("disk_mass", disk_mass, double),
    NBODY_MODEL_FIELD("scale_length", scale_length, double),
    NBODY_MODEL_FIELD("rmax", rmax, double),
    NBODY_MODEL_FIELD("concentration", concentration, double),
    NBODY_MODEL_FIELD("dim", dim, int),
};

#undef NBODY_MODEL_FIELD

std::vector<std::string> model_field_names() {
  std::vector<std::string> names;
  for (const auto& f : kModelFields) names.emplace_back(f.name);
  return names;
}

nb::object generate_model(const std::string& model, nb::handle n_value, nb::handle seed_value,
                          const nb::kwargs& kwargs) {
  if (PyLong_Check(n_value.ptr()) && !nb::isinstance<nb::bool_>(n_value)) {
    long long n = 1;
    if (nb::try_cast(n_value, n) && n < 1)  // the command line's message
      throw input_error("--count", "the number of bodies must be positive", n);
  }
  ModelOptions options;
  options.model = model;
  options.n = count_value(n_value, "generate()", "n", 1);
  options.seed = count_value(seed_value, "generate()", "seed", 0);
  nb::dict run_kwargs;
  for (auto [key, value] : kwargs) {
    const std::string name = nb::cast<std::string>(key);
    const ModelField* field = nullptr;
    for (const auto& f : kModelFields) field = name == f.name ? &f : field;
    if (field) field->set(options, value);
    if (!field || name == "G") {
      if (!field && !find_option(name)) {
        std::string models;
        for (const auto& f : model_field_names()) models += (models.empty() ? "" : ", ") + f;
        throw nb::type_error(
            fmt::format(
                "generate() got an unexpected keyword argument '{}' (model options: {}; run "
                "options: {})",
                printable(name), models, option_names())
                .c_str());
      }
      run_kwargs[key] = value;
    }
  }
  ParticleSystem ps;
  {
    nb::gil_scoped_release release;
    ps = generate(options);
  }
  try {
    check_state(ps);
  } catch (const Error& e) {
    // Bodies the model made but the simulation refuses (a massless disk): say which model.
    throw Error(fmt::format("generate('{}'): the model's bodies are refused: {}", printable(model),
                            e.what()));
  }
  return make_simulation(std::move(ps), run_kwargs, "generate()");
}

}  // namespace

void bind_io(nb::module_& m, SimulationClass& cls) {
  m.def("formats", &format_names,
        "Names of the particle file formats this build reads and writes.");
  m.def("models", &model_names, "Names of the models generate() builds.");
  m.def("model_options", &model_field_names, "Keyword options generate() passes to the model.");

  m.def(
      "load",
      [](const std::filesystem::path& path, const std::string& format, nb::kwargs options) {
        check_path(path, format);
        const FileFormat f = resolve_format(path, format);  // a bad name is an nbody.Error
        ParticleSystem ps = with_file_errors([&] {
          nb::gil_scoped_release release;
          return read_particles(path, f);
        });
        // The readers check what they read; what they let through (a reader's gap) is still
        // refused here, naming the file.
        with_file_errors([&] {
          try {
            check_state(ps);
          } catch (const Error& e) {
            throw Error(fmt::format("{}: {}", printable(path.string()), e.what()));
          }
        });
        // An HDF5 snapshot written by save() keeps the run options in /Parameters: they
        // come back first, and keyword options given here override them.
        RunOptions run;
        if (looks_like_hdf5(path)) {
          with_file_errors([&] {
            apply_parameters(run, read_snapshot_parameters(path, wanted_parameters()),
                             printable(path.string()));
          });
        }
        apply_keywords(run, options, "load()");
        return nb::cast(new PySimulation(std::move(ps), run), nb::rv_policy::take_ownership);
      },
      "path"_a, "format"_a = "auto", "options"_a,
      "Reads a particle file into a new Simulation. format: 'auto' (from the extension, or the "
      "HDF5 signature), "
      "or one of formats(). An HDF5 snapshot written by save() brings back its run options "
      "(/Parameters); keyword options are run options (see Simulation.options) and override "
      "them. A missing or "
      "malformed "
      "file raises nbody.FileError with the message of `nbody run -i`.");

  cls.def(
      "save",
      [](PySimulation& sim, const std::filesystem::path& path, const std::string& format) {
        PySimulation::Busy busy(sim);
        check_path(path, format);
        const FileFormat f = resolve_format(path, format);
        // Nothing is written that load() would refuse: no empty file, no value edited
        // through a view into NaN or a mass <= 0 (an O(N) scan, beside O(N) of writing).
        if (sim.size() == 0) {
          throw input_error(path.string(),
                            "not written: the simulation has no bodies (the "
                            "readers refuse a file without any)");
        }
        sim.check_bodies();
        const ParticleSystem& state = sim.state();
        // HDF5 keeps the run options too (/Parameters), for load(); text and CSV cannot.
        const std::vector<SnapshotParameter> parameters = snapshot_parameters(sim.options());
        with_file_errors([&] {
          nb::gil_scoped_release release;
          if (f == FileFormat::Hdf5) {
            write_snapshot(
                path, state,
                SnapshotOptions{.precision = SnapshotPrecision::Double, .parameters = &parameters});
          } else {
            write_particles(path, state, f);
          }
        });
      },
      "path"_a, "format"_a = "auto",
      "Writes the bodies to a file (atomically: a temporary file renamed into place). format: "
      "'auto' (from "
      "the extension) or one of nbody.formats(). HDF5 also keeps the time and every run option "
      "(/Parameters), which load() restores; text and CSV hold the bodies only.");

  m.def("generate", &generate_model, "model"_a, "n"_a = 1000, "seed"_a = 1, "options"_a,
        "Builds a model of `nbody gen` (see models()) as a new Simulation, deterministic for a "
        "seed. Keywords "
        "are model options (model_options(): radius, mass, size, velocity, e, a, separation, "
        "impact, disk_mass, "
        "scale_length, rmax, concentration, dim, G) or run options (G is both: the velocities are "
        "set up for it). An "
        "unknown keyword "
        "raises TypeError naming it.");
}

}  // namespace nbody::python
