// nbody._nbody: the library as a Python module (nanobind). The pure-Python package
// python/nbody/ re-exports it; docs/python.md is the guide.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "nbody/build_info.hpp"
#include "nbody/collisions.hpp"
#include "nbody/gravity.hpp"
#include "nbody/integrator.hpp"
#include "parallel/single_process.hpp"
#include "python/bindings.hpp"
#include "python/errors.hpp"
#include "python/python_wording.hpp"

namespace nb = nanobind;
using namespace nb::literals;

NB_MODULE(_nbody, m) {
  m.doc() = "nbody: gravitational N-body simulation (the C++ library, with numpy arrays)";
  nbody::python::register_errors(m);
  nbody::python::bind_simulation(m);

  m.def("integrators", &nbody::integrator_names, "Names of the time integrators.");
  m.def("collision_models", &nbody::collision_model_names, "Names of the collision models.");
  m.def(
      "build_info",
      [] {
        const nbody::BuildInfo b = nbody::build_info();
        std::string reason;
        const auto gpus = nbody::gpu_devices(&reason);
        nb::dict d;
        d["version"] = b.version;
        d["compiler"] = b.compiler;
        d["cuda"] = b.cuda;
        d["openmp"] = b.openmp;
        d["max_threads"] = b.max_threads;
        d["cpu"] = b.cpu_model;
        nb::list names;
        for (const auto& g : gpus) names.append(g.name);
        d["gpus"] = names;
        d["gpu_status"] = gpus.empty() ? reason : std::string("available");
        return d;
      },
      "What this module was built with and what the machine offers: version, compiler, cuda, "
      "openmp, "
      "max_threads, cpu, gpus (names of usable GPUs), gpu_status.");
  m.attr("__version__") = nbody::build_info().version;
  // How many processes an MPI launcher (mpirun, srun) started beside this one (1: none);
  // the package warns when several run it (python/nbody/__init__.py).
  m.def("_launcher_ranks", &nbody::parallel::launcher_world_size);
  // For the tests: the command line's message as Python words it.
  m.def("_python_wording", [](const std::string& s) { return nbody::python::python_wording(s); });
}
