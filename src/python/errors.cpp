#include "python/errors.hpp"

namespace nbody::python {

namespace {
PyObject* file_error = nullptr;  // lives as long as the module (never unloaded)
}  // namespace

void register_errors(nb::module_& m) {
  nb::exception<Error> error(m, "Error", PyExc_ValueError);
  error.attr("__module__") = "nbody";
  error.attr("__doc__") =
      "An nbody problem: a bad option or value, bad bodies, an unavailable device. The message "
      "is the one `nbody run` prints for the same mistake.";
  nb::object bases = nb::make_tuple(error, nb::handle(PyExc_OSError));
  file_error = PyErr_NewExceptionWithDoc(
      "nbody.FileError",
      "A particle file could not be read or written (missing, unreadable, malformed: the "
      "message names the file and line). Both an nbody.Error and an OSError.",
      bases.ptr(), nullptr);
  if (!file_error) throw nb::python_error();
  m.attr("FileError") = nb::handle(file_error);
}

void raise_file_error(const char* message) {
  PyErr_SetString(file_error, message);
  throw nb::python_error();
}

}  // namespace nbody::python
