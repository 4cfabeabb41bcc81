#pragma once
// Python exceptions for nbody::Error. The message is the C++ what() unchanged, which is
// what the command line prints after "nbody: error: ".
//   nbody.Error      (a ValueError): bad options, bad bodies, unavailable devices
//   nbody.FileError  (an nbody.Error and an OSError): reading or writing a particle file
#include <utility>

#include <nanobind/nanobind.h>

#include "nbody/error.hpp"

namespace nbody::python {

namespace nb = nanobind;

/// Creates nbody.Error and nbody.FileError in module m and translates nbody::Error.
void register_errors(nb::module_& m);

/// Raises the nbody.FileError for message (call with the GIL held).
[[noreturn]] void raise_file_error(const char* message);

/// Runs f; an nbody::Error from it becomes an nbody.FileError with the same message.
template <class F>
decltype(auto) with_file_errors(F&& f) {
  try {
    return std::forward<F>(f)();
  } catch (const Error& e) {
    raise_file_error(e.what());
  }
}

}  // namespace nbody::python
