// The attributes of hdf5_file.hpp's Group: numeric scalars and arrays, and strings
// (written as variable-length UTF-8, read in either the variable or the fixed-length form).
#include <fmt/format.h>

#include <cmath>
#include <cstring>

#include "io/hdf5_detail.hpp"
#include "io/hdf5_file.hpp"

namespace nbody::hdf5 {

using namespace detail;

namespace {

Handle string_type(bool variable, std::size_t size, H5T_cset_t cset) {
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), variable ? H5T_VARIABLE : size);
  H5Tset_cset(type.get(), cset);
  return type;
}

}  // namespace

// ---- Group: attributes -------------------------------------------------------------

void Group::write_numeric_attribute(const std::string& name, const Shape& shape, hid_t file_type,
                                    hid_t memory_type, const void* data) {
  Handle space(shape.empty()
                   ? H5Screate(H5S_SCALAR)
                   : H5Screate_simple(static_cast<int>(shape.size()), shape.data(), nullptr),
               H5Sclose);
  Handle attr(
      H5Acreate2(handle_.get(), name.c_str(), file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT),
      H5Aclose);
  if (!attr.valid() || H5Awrite(attr.get(), memory_type, data) < 0) {
    fail(fmt::format("{}: cannot write attribute{}", where(name), library_reason()));
  }
}

void Group::write_attribute(const std::string& name, double value) {
  write_numeric_attribute(name, {}, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &value);
}

void Group::write_attribute(const std::string& name, std::int32_t value) {
  write_numeric_attribute(name, {}, H5T_STD_I32LE, H5T_NATIVE_INT32, &value);
}

void Group::write_attribute(const std::string& name, std::uint64_t value) {
  write_numeric_attribute(name, {}, H5T_STD_U64LE, H5T_NATIVE_UINT64, &value);
}

void Group::write_attribute(const std::string& name, const std::vector<double>& values) {
  write_numeric_attribute(name, {values.size()}, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, values.data());
}

void Group::write_attribute(const std::string& name, const std::vector<std::uint32_t>& values) {
  write_numeric_attribute(name, {values.size()}, H5T_STD_U32LE, H5T_NATIVE_UINT32, values.data());
}

void Group::write_attribute(const std::string& name, const std::string& value) {
  // Variable-length UTF-8, as h5py writes Python strings: any length, read back as str.
  const Handle type = string_type(true, 0, H5T_CSET_UTF8);
  const Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  const Handle attr(
      H5Acreate2(handle_.get(), name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
      H5Aclose);
  const char* text = value.c_str();
  if (!attr.valid() || H5Awrite(attr.get(), type.get(), &text) < 0) {
    fail(fmt::format("{}: cannot write attribute{}", where(name), library_reason()));
  }
}

Handle Group::open_attribute(const std::string& name) const {
  if (!has_attribute(name)) fail(fmt::format("{} is missing", where(name)));
  Handle attr(H5Aopen(handle_.get(), name.c_str(), H5P_DEFAULT), H5Aclose);
  if (!attr.valid()) fail(fmt::format("{}: cannot open attribute {}", where(name), kCorrupt));
  return attr;
}

std::size_t Group::attribute_size(const std::string& name) const {
  const Handle attr = open_attribute(name);
  const Handle space(H5Aget_space(attr.get()), H5Sclose);
  if (!space.valid()) fail(fmt::format("{}: cannot read its shape {}", where(name), kCorrupt));
  return static_cast<std::size_t>(element_count(extent_of(where(name), space.get(), *this)));
}

void Group::read_numeric_attribute(const std::string& name, hid_t memory_type, void* data,
                                   std::size_t count) const {
  const Handle attr = open_attribute(name);
  const Handle type(H5Aget_type(attr.get()), H5Tclose);
  if (!type.valid()) fail(fmt::format("{}: cannot read its datatype {}", where(name), kCorrupt));
  check_number_type(type.get(), where(name), *this, true);
  if (count > 0 && H5Aread(attr.get(), memory_type, data) < 0) {
    fail(fmt::format("{}: cannot read {}", where(name), kCorrupt));
  }
}

std::vector<double> Group::read_attribute_doubles(const std::string& name) const {
  std::vector<double> values(attribute_size(name));
  read_numeric_attribute(name, H5T_NATIVE_DOUBLE, values.data(), values.size());
  return values;
}

std::vector<std::uint64_t> Group::read_attribute_uint64(const std::string& name) const {
  // Checked as double first, so that a negative count is refused rather than clipped;
  // then read as uint64, which keeps all 64 bits.
  const std::vector<double> values = read_attribute_doubles(name);
  for (std::size_t i = 0; i < values.size(); ++i) {
    // 2^64 is the first double above every uint64; 4.5 bodies is a corrupt count.
    if (!(values[i] >= 0) || values[i] >= 18446744073709551616.0 ||
        values[i] != std::floor(values[i])) {
      refuse(where(name) + (values.size() > 1 ? fmt::format("[{}]", i) : ""),
             "must be a non-negative integer", values[i]);
    }
  }
  std::vector<std::uint64_t> exact(values.size());
  read_numeric_attribute(name, H5T_NATIVE_UINT64, exact.data(), exact.size());
  return exact;
}

double Group::read_attribute_double(const std::string& name) const {
  const std::vector<double> values = read_attribute_doubles(name);
  if (values.size() != 1)
    fail(fmt::format("{} has {} values, expected 1", where(name), values.size()));
  return values[0];
}

std::uint64_t Group::read_attribute_count(const std::string& name) const {
  const std::vector<std::uint64_t> values = read_attribute_uint64(name);
  if (values.size() != 1)
    fail(fmt::format("{} has {} values, expected 1", where(name), values.size()));
  return values[0];
}

std::size_t Group::attribute_element_size(const std::string& name) const {
  const Handle attr = open_attribute(name);
  const Handle type(H5Aget_type(attr.get()), H5Tclose);
  const std::size_t size = type.valid() ? H5Tget_size(type.get()) : 0;
  if (size == 0) fail(fmt::format("{}: cannot read its datatype {}", where(name), kCorrupt));
  return size;
}

std::string Group::read_attribute_string(const std::string& name) const {
  const Handle attr = open_attribute(name);
  const Handle type(H5Aget_type(attr.get()), H5Tclose);
  if (!type.valid()) fail(fmt::format("{}: cannot read its datatype {}", where(name), kCorrupt));
  if (H5Tget_class(type.get()) != H5T_STRING) fail(fmt::format("{} is not a string", where(name)));
  if (attribute_size(name) != 1) fail(fmt::format("{} is not a single string", where(name)));
  const H5T_cset_t cset = H5Tget_cset(type.get());
  const htri_t variable = H5Tis_variable_str(type.get());
  if (cset < 0 || variable < 0) {
    fail(fmt::format("{}: cannot read its string type {}", where(name), kCorrupt));
  }
  if (variable > 0) {
    const Handle memory = string_type(true, 0, cset);
    char* text = nullptr;
    if (H5Aread(attr.get(), memory.get(), &text) < 0) {
      fail(fmt::format("{}: cannot read {}", where(name), kCorrupt));
    }
    std::string value = text != nullptr ? text : "";
    H5free_memory(text);
    return value;
  }
  const std::size_t size = H5Tget_size(type.get());
  if (size == 0 || size > (std::size_t{1} << 20)) {
    fail(fmt::format("{}: a string of {} bytes {}", where(name), size, kCorrupt));
  }
  const Handle memory = string_type(false, size, cset);
  std::string value(size, '\0');
  if (H5Aread(attr.get(), memory.get(), value.data()) < 0) {
    fail(fmt::format("{}: cannot read {}", where(name), kCorrupt));
  }
  value.resize(std::strlen(value.c_str()));  // fixed-length strings are NUL-padded
  return value;
}

}  // namespace nbody::hdf5
