#pragma once
// numpy in and out. Views (alias_view) share memory with the simulation; everything else
// here is a copy. Inputs go through numpy.ascontiguousarray, so lists, tuples, integer and
// non-contiguous arrays are all accepted; arrays of anything but integers and reals
// (bool, complex, strings, objects) are a TypeError naming the argument, never a silent
// conversion (numpy would read "1" as 1.0 and drop the imaginary part of 1+2j).
#include <cstdint>
#include <initializer_list>
#include <utility>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include "nbody/particles.hpp"
#include "python/py_simulation.hpp"

namespace nbody::python {

namespace nb = nanobind;

/// A C-contiguous input array of 1 or 2 dimensions (keeps the numpy array alive).
template <class T>
class Input {
 public:
  explicit Input(nb::ndarray<const T, nb::c_contig, nb::device::cpu> a)
      : array_(std::move(a)), columns_(array_.ndim() == 2 ? array_.shape(1) : 1) {}
  [[nodiscard]] std::size_t size() const { return array_.ndim() == 0 ? 1 : array_.shape(0); }
  [[nodiscard]] T operator()(std::size_t row, std::size_t column = 0) const {
    return array_.data()[row * columns_ + column];
  }
  [[nodiscard]] std::size_t columns() const { return columns_; }
  [[nodiscard]] const T* begin() const { return array_.data(); }
  [[nodiscard]] const T* end() const { return array_.data() + array_.size(); }

 private:
  nb::ndarray<const T, nb::c_contig, nb::device::cpu> array_;
  std::size_t columns_;
};
using InputArray = Input<double>;
using InputIds = Input<std::uint64_t>;

/// numpy.asarray(obj), refused unless it holds integers (or, integers false, reals too):
/// TypeError naming the argument for bool, complex, string and object arrays; ValueError
/// for what numpy cannot read as an array (a ragged list).
[[nodiscard]] nb::object numeric_array(nb::handle obj, const char* name, bool integers = false);
/// obj as a C-contiguous float64 array with this shape (-1: any length); otherwise
/// ValueError("NAME: expected an array of shape (N, 3), got shape (4, 2)").
[[nodiscard]] InputArray as_float64(nb::handle obj, const char* name,
                                    std::initializer_list<long> shape);
/// obj as uint64 ids, one dimension: integers only (TypeError otherwise), each >= 1 (or 0
/// too, where 0 asks for a fresh id) and below 2^64 (nbody.Error naming name[i]).
/// Uniqueness is the caller's (checks.hpp).
[[nodiscard]] InputIds as_ids(nb::handle obj, const char* name, bool zero_allowed = false);

/// A writable 1-D numpy view of v (no copy). The array's owner keeps the Python
/// Simulation `self` alive and counts as a live view (PySimulation::view_created).
template <class T>
[[nodiscard]] nb::object alias_view(PySimulation& sim, nb::handle self, std::vector<T>& v);

/// A copy of v as a read-only 1-D array (the GPU path: it does not alias the device state).
template <class T>
[[nodiscard]] nb::object read_only_copy(const std::vector<T>& v);

/// An (N, 3) float64 copy of three component arrays.
[[nodiscard]] nb::object stacked_copy(const std::vector<double>& a, const std::vector<double>& b,
                                      const std::vector<double>& c);
/// A float64 array of 3.
[[nodiscard]] nb::object vector3(const Vec3& v);

// ---- Definitions ------------------------------------------------------------------------

namespace detail {
/// A capsule that frees `data` (a new T[]) when numpy is done with it.
template <class T>
nb::capsule owning_capsule(T* data) {
  return nb::capsule(data, [](void* p) noexcept { delete[] static_cast<T*>(p); });
}
/// A capsule that keeps the Python Simulation alive and tells it when the view dies.
nb::capsule view_owner(PySimulation& sim, nb::handle self);
nb::object empty_array(const char* dtype);
template <class T>
const char* dtype_name() {
  return std::is_same_v<T, double> ? "float64" : "uint64";
}
}  // namespace detail

template <class T>
nb::object alias_view(PySimulation& sim, nb::handle self, std::vector<T>& v) {
  if (v.empty()) return detail::empty_array(detail::dtype_name<T>());
  nb::capsule owner = detail::view_owner(sim, self);
  return nb::cast(nb::ndarray<nb::numpy, T, nb::ndim<1>>(v.data(), {v.size()}, owner),
                  nb::rv_policy::reference);
}

template <class T>
nb::object read_only_copy(const std::vector<T>& v) {
  if (v.empty()) return detail::empty_array(detail::dtype_name<T>());
  T* data = new T[v.size()];
  std::copy(v.begin(), v.end(), data);
  return nb::cast(
      nb::ndarray<nb::numpy, const T, nb::ndim<1>>(data, {v.size()}, detail::owning_capsule(data)),
      nb::rv_policy::reference);
}

}  // namespace nbody::python
