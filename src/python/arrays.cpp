#include "python/arrays.hpp"

#include <string>

#include <fmt/format.h>

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

InputArray as_float64(nb::handle obj, const char* name, std::initializer_list<long> shape) {
  nb::object array = numpy().attr("ascontiguousarray")(obj, "dtype"_a = "float64");
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

InputIds as_ids(nb::handle obj, const char* name) {
  nb::module_ np = numpy();
  nb::object array = np.attr("asarray")(obj);
  const std::string kind = nb::cast<std::string>(array.attr("dtype").attr("kind"));
  if (kind != "i" && kind != "u") {
    throw nb::type_error(fmt::format("{}: expected integers, got dtype {}", name,
                                     nb::cast<std::string>(nb::str(array.attr("dtype"))))
                             .c_str());
  }
  if (kind == "i" && PyObject_IsTrue(np.attr("any")(np.attr("less")(array, 0)).ptr()) == 1) {
    throw nb::value_error(fmt::format("{}: must be >= 0", name).c_str());
  }
  nb::object ids = np.attr("ascontiguousarray")(array, "dtype"_a = "uint64");
  auto in = nb::cast<nb::ndarray<const std::uint64_t, nb::c_contig, nb::device::cpu>>(ids);
  if (in.ndim() != 1) {
    throw nb::value_error(
        fmt::format("{}: expected a one-dimensional array, got {} dimensions", name, in.ndim())
            .c_str());
  }
  return InputIds(std::move(in));
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
