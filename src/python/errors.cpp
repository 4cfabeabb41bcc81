#include "python/errors.hpp"

#include "python/python_wording.hpp"

#include <exception>
#include <filesystem>
#include <new>
#include <stdexcept>
#include <string>
#include <system_error>
#include <typeinfo>  // std::bad_cast

namespace nbody::python {

namespace {

PyObject* file_error = nullptr;   // lives as long as the module (never unloaded)
PyObject* nbody_error = nullptr;  // nbody.Error, likewise

/// Every C++ exception that is not already a Python one (nbody::Error, nanobind's own)
/// becomes a Python exception of the right class whose message says what happened, never
/// a RuntimeError reading "std::bad_cast". Tried before nanobind's translators (the last
/// registered is tried first); what it rethrows goes on to them.
void translate(const std::exception_ptr& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (const Error& e) {
    // nbody.Error, worded for Python: the library speaks of command-line flags.
    PyErr_SetString(nbody_error, python_wording(e.what()).c_str());
  } catch (const nb::builtin_exception&) {
    throw;  // TypeError, ValueError, IndexError raised by the bindings
  } catch (const nb::python_error&) {
    throw;
  } catch (const std::bad_alloc&) {
    PyErr_SetString(PyExc_MemoryError,
                    "out of memory: the request needs more than the machine gives");
  } catch (const std::length_error& e) {
    PyErr_Format(PyExc_MemoryError, "out of memory: a request beyond what can be allocated (%s)",
                 e.what());
  } catch (const std::bad_cast&) {  // nb::cast_error too: a value the bindings could not convert
    PyErr_SetString(PyExc_TypeError,
                    "a value of the wrong type: it could not be converted to what nbody needs "
                    "(see the function's signature)");
  } catch (const std::filesystem::filesystem_error& e) {
    PyErr_SetString(file_error, e.what());
  } catch (const std::system_error& e) {
    PyErr_SetString(PyExc_OSError, e.what());
  } catch (const std::runtime_error& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());  // the module's own (a busy simulation)
  } catch (const std::exception& e) {
    PyErr_Format(PyExc_RuntimeError, "nbody internal error: %s (a bug: please report it)",
                 e.what());
  }
}

}  // namespace

void register_errors(nb::module_& m) {
  nb::exception<Error> error(m, "Error", PyExc_ValueError);
  nbody_error = error.ptr();
  error.attr("__module__") = "nbody";
  error.attr("__doc__") =
      "An nbody problem: a bad option or value, bad bodies, an unavailable device. The message "
      "is the one `nbody run` prints for the same mistake, with Python's names for the options "
      "(softening, not --softening).";
  nb::object bases = nb::make_tuple(error, nb::handle(PyExc_OSError));
  file_error = PyErr_NewExceptionWithDoc(
      "nbody.FileError",
      "A particle file could not be read or written (missing, unreadable, malformed: the "
      "message names the file and line). Both an nbody.Error and an OSError.",
      bases.ptr(), nullptr);
  if (!file_error) throw nb::python_error();
  m.attr("FileError") = nb::handle(file_error);
  nb::register_exception_translator(translate);
}

void raise_file_error(const char* message) {
  PyErr_SetString(file_error, python_wording(message).c_str());
  throw nb::python_error();
}

}  // namespace nbody::python
