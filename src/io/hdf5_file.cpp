// The HDF5 wrappers of hdf5_file.hpp. Files use the library's default (oldest) format
// version, so any HDF5 1.8+ reader (h5py, yt, pynbody, GADGET, SWIFT tools) opens them.
#include "io/hdf5_file.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <mutex>

#include "nbody/error.hpp"

namespace nbody::hdf5 {

namespace {

constexpr const char* kCorrupt = "(truncated or corrupt?)";

hsize_t element_count(const Shape& shape) {
  hsize_t n = 1;
  for (hsize_t d : shape) n *= d;
  return n;
}

Shape extent_of(const std::string& what, hid_t space, const Group& group) {
  const int rank = H5Sget_simple_extent_ndims(space);
  if (rank < 0) group.fail(fmt::format("{}: cannot read its shape {}", what, kCorrupt));
  Shape shape(static_cast<std::size_t>(rank));
  if (rank > 0 && H5Sget_simple_extent_dims(space, shape.data(), nullptr) < 0) {
    group.fail(fmt::format("{}: cannot read its shape {}", what, kCorrupt));
  }
  // A null dataspace (no elements at all) reads as rank 0; call it an empty 1-D extent.
  if (rank == 0 && H5Sget_simple_extent_type(space) == H5S_NULL) shape = {0};
  return shape;
}

std::vector<float> to_float(const std::vector<double>& values) {
  std::vector<float> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = static_cast<float>(values[i]);
  return out;
}

/// Creation properties without HDF5's default object timestamps: the same state gives
/// the same bytes, so a restarted run's files compare equal to an uninterrupted run's.
Handle untimed(hid_t property_class) {
  Handle plist(H5Pcreate(property_class), H5Pclose);
  H5Pset_obj_track_times(plist.get(), false);
  return plist;
}

/// File access without POSIX locks: some NFS and Lustre mounts refuse locked opens, and
/// no two of our writers ever share a file (each writes its own temporary).
Handle file_access() {
  Handle plist(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
#if H5_VERSION_GE(1, 10, 7)
  H5Pset_file_locking(plist.get(), false, true);
#endif
  return plist;
}

Handle string_type(bool variable, std::size_t size, H5T_cset_t cset) {
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), variable ? H5T_VARIABLE : size);
  H5Tset_cset(type.get(), cset);
  return type;
}

}  // namespace

void silence_library_errors() {
  static std::once_flag once;
  std::call_once(once, [] { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); });
}

bool Handle::close() noexcept {
  if (id_ < 0) return true;
  const herr_t status = close_(std::exchange(id_, H5I_INVALID_HID));
  return status >= 0;
}

// ---- Group: structure --------------------------------------------------------------

std::string Group::where(const std::string& name) const {
  return path_ == "/" ? "/" + name : path_ + "/" + name;
}

void Group::fail(const std::string& problem) const {
  throw Error(fmt::format("{}: {}", file_, problem));
}

bool Group::has(const std::string& name) const {
  return H5Lexists(handle_.get(), name.c_str(), H5P_DEFAULT) > 0;
}

bool Group::has_attribute(const std::string& name) const {
  return H5Aexists(handle_.get(), name.c_str()) > 0;
}

Group Group::create_group(const std::string& name) {
  const Handle properties = untimed(H5P_GROUP_CREATE);
  Handle g(H5Gcreate2(handle_.get(), name.c_str(), H5P_DEFAULT, properties.get(), H5P_DEFAULT),
           H5Gclose);
  if (!g.valid()) fail(fmt::format("{}: cannot create group", where(name)));
  return Group(std::move(g), file_, where(name));
}

Group Group::open_group(const std::string& name) const {
  if (!has(name)) fail(fmt::format("{} is missing", where(name)));
  Handle g(H5Gopen2(handle_.get(), name.c_str(), H5P_DEFAULT), H5Gclose);
  if (!g.valid()) fail(fmt::format("{}: cannot open as a group {}", where(name), kCorrupt));
  return Group(std::move(g), file_, where(name));
}

void Group::link(const std::string& name, const std::string& target_path) {
  if (H5Lcreate_hard(handle_.get(), target_path.c_str(), handle_.get(), name.c_str(), H5P_DEFAULT,
                     H5P_DEFAULT) < 0) {
    fail(fmt::format("{}: cannot link to {}", where(name), target_path));
  }
}

// ---- Group: datasets ---------------------------------------------------------------

void Group::write_dataset(const std::string& name, const Shape& shape, hid_t file_type,
                          hid_t memory_type, const void* data) {
  const Handle properties = untimed(H5P_DATASET_CREATE);
  Handle space(H5Screate_simple(static_cast<int>(shape.size()), shape.data(), nullptr), H5Sclose);
  Handle set(H5Dcreate2(handle_.get(), name.c_str(), file_type, space.get(), H5P_DEFAULT,
                        properties.get(), H5P_DEFAULT),
             H5Dclose);
  if (!space.valid() || !set.valid()) fail(fmt::format("{}: cannot create dataset", where(name)));
  // Nothing to transfer for N = 0: the empty dataset (extent 0) is the whole content.
  if (element_count(shape) > 0 &&
      H5Dwrite(set.get(), memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0) {
    fail(fmt::format("{}: cannot write dataset", where(name)));
  }
}

void Group::write_rows(const std::string& name, const std::vector<double>& x,
                       const std::vector<double>& y, const std::vector<double>& z,
                       Precision precision) {
  const std::size_t n = x.size();
  std::vector<double> rows(3 * n);  // N x 3, row-major: x0 y0 z0 x1 y1 z1 ...
  for (std::size_t i = 0; i < n; ++i) {
    rows[3 * i] = x[i];
    rows[3 * i + 1] = y[i];
    rows[3 * i + 2] = z[i];
  }
  const Shape shape{n, 3};
  if (precision == Precision::Double) {
    write_dataset(name, shape, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, rows.data());
  } else {
    const std::vector<float> narrow = to_float(rows);
    write_dataset(name, shape, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, narrow.data());
  }
}

void Group::write_values(const std::string& name, const std::vector<double>& values,
                         Precision precision) {
  const Shape shape{values.size()};
  if (precision == Precision::Double) {
    write_dataset(name, shape, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, values.data());
  } else {
    const std::vector<float> narrow = to_float(values);
    write_dataset(name, shape, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, narrow.data());
  }
}

void Group::write_ids(const std::string& name, const std::vector<std::uint64_t>& ids) {
  write_dataset(name, Shape{ids.size()}, H5T_STD_U64LE, H5T_NATIVE_UINT64, ids.data());
}

Handle Group::open_dataset(const std::string& name) const {
  if (!has(name)) fail(fmt::format("{} is missing", where(name)));
  Handle set(H5Dopen2(handle_.get(), name.c_str(), H5P_DEFAULT), H5Dclose);
  if (!set.valid()) fail(fmt::format("{}: cannot open as a dataset {}", where(name), kCorrupt));
  return set;
}

Shape Group::dataset_shape(const std::string& name) const {
  const Handle set = open_dataset(name);
  const Handle space(H5Dget_space(set.get()), H5Sclose);
  return extent_of(where(name), space.get(), *this);
}

void Group::read_dataset(const std::string& name, hid_t memory_type, void* data,
                         std::size_t count) const {
  const Handle set = open_dataset(name);
  if (count > 0 && H5Dread(set.get(), memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0) {
    fail(fmt::format("{}: cannot read {}", where(name), kCorrupt));
  }
}

std::vector<double> Group::read_doubles(const std::string& name) const {
  const Handle set = open_dataset(name);
  const Handle type(H5Dget_type(set.get()), H5Tclose);
  const H5T_class_t cls = H5Tget_class(type.get());
  if (cls != H5T_FLOAT && cls != H5T_INTEGER) fail(fmt::format("{} is not numeric", where(name)));
  std::vector<double> values(static_cast<std::size_t>(element_count(dataset_shape(name))));
  read_dataset(name, H5T_NATIVE_DOUBLE, values.data(), values.size());
  return values;
}

std::vector<std::uint64_t> Group::read_ids(const std::string& name) const {
  const Handle set = open_dataset(name);
  const Handle type(H5Dget_type(set.get()), H5Tclose);
  if (H5Tget_class(type.get()) != H5T_INTEGER) {
    fail(fmt::format("{} does not hold integers", where(name)));
  }
  const auto count = static_cast<std::size_t>(element_count(dataset_shape(name)));
  std::vector<std::uint64_t> ids(count);
  if (H5Tget_sign(type.get()) == H5T_SGN_2) {
    // Read signed ids as signed, so that a negative id is reported, not clipped to 0.
    std::vector<std::int64_t> signed_ids(count);
    read_dataset(name, H5T_NATIVE_INT64, signed_ids.data(), count);
    for (std::size_t i = 0; i < count; ++i) {
      if (signed_ids[i] < 0) {
        fail(fmt::format("{}[{}] is {} (ids must be positive)", where(name), i, signed_ids[i]));
      }
      ids[i] = static_cast<std::uint64_t>(signed_ids[i]);
    }
  } else {
    read_dataset(name, H5T_NATIVE_UINT64, ids.data(), count);
  }
  return ids;
}

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
    fail(fmt::format("{}: cannot write attribute", where(name)));
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
    fail(fmt::format("{}: cannot write attribute", where(name)));
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
  return static_cast<std::size_t>(element_count(extent_of(where(name), space.get(), *this)));
}

void Group::read_numeric_attribute(const std::string& name, hid_t memory_type, void* data,
                                   std::size_t count) const {
  const Handle attr = open_attribute(name);
  const Handle type(H5Aget_type(attr.get()), H5Tclose);
  const H5T_class_t cls = H5Tget_class(type.get());
  if (cls != H5T_FLOAT && cls != H5T_INTEGER) fail(fmt::format("{} is not numeric", where(name)));
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
    if (!(values[i] >= 0)) {
      fail(fmt::format("{}{} is {} (must be a non-negative integer)", where(name),
                       values.size() > 1 ? fmt::format("[{}]", i) : "", values[i]));
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
  return H5Tget_size(type.get());
}

std::string Group::read_attribute_string(const std::string& name) const {
  const Handle attr = open_attribute(name);
  const Handle type(H5Aget_type(attr.get()), H5Tclose);
  if (H5Tget_class(type.get()) != H5T_STRING) fail(fmt::format("{} is not a string", where(name)));
  if (attribute_size(name) != 1) fail(fmt::format("{} is not a single string", where(name)));
  const H5T_cset_t cset = H5Tget_cset(type.get());
  if (H5Tis_variable_str(type.get()) > 0) {
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
  const Handle memory = string_type(false, size, cset);
  std::string value(size, '\0');
  if (H5Aread(attr.get(), memory.get(), value.data()) < 0) {
    fail(fmt::format("{}: cannot read {}", where(name), kCorrupt));
  }
  value.resize(std::strlen(value.c_str()));  // fixed-length strings are NUL-padded
  return value;
}

// ---- File --------------------------------------------------------------------------

File::File(Handle file, const std::string& name)
    : file_(std::move(file)),
      root_(Handle(H5Gopen2(file_.get(), "/", H5P_DEFAULT), H5Gclose), name, "/") {}

File File::create(const std::filesystem::path& path, const std::string& name) {
  silence_library_errors();
  Handle file(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, file_access().get()), H5Fclose);
  if (!file.valid()) {
    throw Error(
        fmt::format("{}: cannot write file (HDF5 cannot create '{}')", name, path.string()));
  }
  return File(std::move(file), name);
}

File File::open(const std::filesystem::path& path) {
  silence_library_errors();
  const std::string name = path.string();
  {
    // The operating system's reason (missing, no permission) says more than HDF5's.
    errno = 0;
    std::ifstream probe(path, std::ios::binary);
    std::error_code ec;
    if (!probe || std::filesystem::is_directory(path, ec)) {
      throw Error(fmt::format("{}: cannot open file ({})", name,
                              errno != 0 ? std::strerror(errno) : "is it a directory?"));
    }
  }
  Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, file_access().get()), H5Fclose);
  if (!file.valid()) throw Error(fmt::format("{}: not a readable HDF5 file {}", name, kCorrupt));
  return File(std::move(file), name);
}

void File::close() {
  root_.handle_.close();
  // Flush explicitly: a full disk shows up here, while H5Fclose on a still-referenced
  // file would only drop our handle.
  const bool flushed = H5Fflush(file_.get(), H5F_SCOPE_GLOBAL) >= 0;
  const bool closed = file_.close();
  if (!flushed || !closed) root_.fail("cannot write file (HDF5 could not flush it to disk)");
}

}  // namespace nbody::hdf5
