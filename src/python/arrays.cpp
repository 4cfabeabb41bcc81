#include "python/arrays.hpp"

#include <string>

#include <fmt/format.h>

#include "nbody/input_error.hpp"

namespace nbody::python {

using namespace nb::literals;

namespace {

nb::module_ numpy() {
  return nb::module_::import_("numpy");
}

std::string shape_text(const std::vector<std::size_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

std::string expected_text(std::initializer_list<long> shape) {
  std::string s = "(";
  std::size_t i = 0;
  for (long d : shape) s += (i++ ? ", " : "") + (d < 0 ? std::string("N") : std::to_string(d));
  return s + (shape.size() == 1 ? ",)" : ")");
}

}  // namespace

nb::object numeric_array(nb::handle obj, const char* name, bool integers) {
  nb::object array;
  try {
    array = numpy().attr("asarray")(obj);
  } catch (nb::python_error& e) {  // a ragged list, a type numpy cannot read
    nb::object why = nb::steal(PyObject_Str(e.value().ptr()));
    throw nb::value_error(fmt::format("{}: cannot be read as an array ({})", name,
                                      why ? printable(nb::cast<std::string>(why)) : "?")
                              .c_str());
  }
  const std::string kind = nb::cast<std::string>(array.attr("dtype").attr("kind"));
  const bool ok = kind == "i" || kind == "u" || (!integers && kind == "f");
  if (!ok) {
    const std::string dtype = nb::cast<std::string>(array.attr("dtype").attr("name"));
    // An object array of integers is what numpy makes of ints beyond 64 bits.
    const char* wanted = !integers     ? "real numbers"
                         : kind == "O" ? "integers below 2^64"
                                       : "integers";
    throw nb::type_error(
        fmt::format("{}: expected {}, got an array of dtype {}", name, wanted, dtype).c_str());
  }
  return array;
}

InputArray as_float64(nb::handle obj, const char* name, std::initializer_list<long> shape) {
  nb::object array =
      numpy().attr("ascontiguousarray")(numeric_array(obj, name, false), "dtype"_a = "float64");
  auto in = nb::cast<nb::ndarray<const double, nb::c_contig, nb::device::cpu>>(array);
  std::vector<std::size_t> got(in.ndim());
  for (std::size_t d = 0; d < in.ndim(); ++d) got[d] = in.shape(d);
  bool ok = got.size() == shape.size();
  std::size_t d = 0;
  for (long want : shape) {
    if (ok && want >= 0 && got[d] != std::size_t(want)) ok = false;
    ++d;
  }
  if (!ok) {
    throw nb::value_error(fmt::format("{}: expected an array of shape {}, got shape {}", name,
                                      expected_text(shape), shape_text(got))
                              .c_str());
  }
  return InputArray(std::move(in));
}

InputIds as_ids(nb::handle obj, const char* name, bool zero_allowed) {
  nb::module_ np = numpy();
  nb::object array = numeric_array(obj, name, true);
  const auto ndim = nb::cast<std::size_t>(array.attr("ndim"));
  if (ndim != 1) {
    throw nb::value_error(
        fmt::format("{}: expected a one-dimensional array, got {} dimensions", name, ndim).c_str());
  }
  const char* rule = zero_allowed ? "must be >= 1, or 0 for the next free id" : "must be >= 1";
  if (nb::cast<std::string>(array.attr("dtype").attr("kind")) == "i") {
    auto signed_ids = nb::cast<nb::ndarray<const std::int64_t, nb::c_contig, nb::device::cpu>>(
        np.attr("ascontiguousarray")(array, "dtype"_a = "int64"));
    for (std::size_t i = 0; i < signed_ids.size(); ++i) {
      if (signed_ids.data()[i] < 0)
        throw input_error(fmt::format("{}[{}]", name, i), rule, signed_ids.data()[i]);
    }
  }
  nb::object ids = np.attr("ascontiguousarray")(array, "dtype"_a = "uint64");
  InputIds in(nb::cast<nb::ndarray<const std::uint64_t, nb::c_contig, nb::device::cpu>>(ids));
  for (std::size_t i = 0; i < in.size() && !zero_allowed; ++i) {
    if (in(i) == 0) throw input_error(fmt::format("{}[{}]", name, i), rule, in(i));
  }
  return in;
}

nb::object stacked_copy(const std::vector<double>& a, const std::vector<double>& b,
                        const std::vector<double>& c) {
  const std::size_t n = a.size();
  if (n == 0) return numpy().attr("empty")(nb::make_tuple(0, 3));
  double* data = new double[3 * n];
  for (std::size_t i = 0; i < n; ++i) {
    data[3 * i] = a[i];
    data[3 * i + 1] = b[i];
    data[3 * i + 2] = c[i];
  }
  return nb::cast(
      nb::ndarray<nb::numpy, double, nb::ndim<2>>(data, {n, 3}, detail::owning_capsule(data)),
      nb::rv_policy::reference);
}

nb::object vector3(const Vec3& v) {
  return numpy().attr("array")(nb::make_tuple(v.x, v.y, v.z));
}

namespace detail {

nb::capsule view_owner(PySimulation& sim, nb::handle self) {
  struct Owner {
    PySimulation* sim;
    nb::object keep_alive;  // the Python Simulation: its buffers outlive every view
  };
  sim.view_created();
  auto* owner = new Owner{&sim, nb::borrow(self)};
  return nb::capsule(owner, [](void* p) noexcept {
    auto* o = static_cast<Owner*>(p);
    o->sim->view_released();
    delete o;  // capsules die with the GIL held, so dropping the reference is safe
  });
}

nb::object empty_array(const char* dtype) {
  return numpy().attr("empty")(0, "dtype"_a = dtype);
}

}  // namespace detail

}  // namespace nbody::python
