// The datasets of hdf5_file.hpp's Group: 1-D and N x 3 floating-point datasets stored as
// float or double, unsigned 64-bit ids; readers check the class and convert.
#include <fmt/format.h>

#include <filesystem>

#include "io/hdf5_detail.hpp"
#include "io/hdf5_file.hpp"

namespace nbody::hdf5 {

using namespace detail;

namespace {

std::vector<float> to_float(std::span<const double> values) {
  std::vector<float> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = static_cast<float>(values[i]);
  return out;
}

}  // namespace

// ---- Group: datasets ---------------------------------------------------------------

void Group::write_dataset(const std::string& name, const Shape& shape, hid_t file_type,
                          hid_t memory_type, const void* data) {
  const Handle properties = untimed(H5P_DATASET_CREATE);
  Handle space(H5Screate_simple(static_cast<int>(shape.size()), shape.data(), nullptr), H5Sclose);
  Handle set(H5Dcreate2(handle_.get(), name.c_str(), file_type, space.get(), H5P_DEFAULT,
                        properties.get(), H5P_DEFAULT),
             H5Dclose);
  if (!space.valid() || !set.valid()) {
    fail(fmt::format("{}: cannot create dataset{}", where(name), library_reason()));
  }
  // Nothing to transfer for N = 0: the empty dataset (extent 0) is the whole content; none
  // for a dataset written in parts (data null: create_values, create_ids).
  if (data != nullptr && element_count(shape) > 0 &&
      H5Dwrite(set.get(), memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0) {
    fail(fmt::format("{}: cannot write dataset{}", where(name), library_reason()));
  }
  // Closing writes what libhdf5 kept in its sieve buffer (a small dataset's data): its
  // failure (a full disk) would otherwise lose the data without a word.
  if (!set.close()) fail(fmt::format("{}: cannot write dataset{}", where(name), library_reason()));
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

void Group::create_values(const std::string& name, std::uint64_t rows, std::size_t columns,
                          Precision precision) {
  const Shape shape = columns > 1 ? Shape{rows, columns} : Shape{rows};
  write_dataset(name, shape, precision == Precision::Double ? H5T_IEEE_F64LE : H5T_IEEE_F32LE,
                H5T_NATIVE_DOUBLE, nullptr);
}

void Group::create_ids(const std::string& name, std::uint64_t rows) {
  write_dataset(name, Shape{rows}, H5T_STD_U64LE, H5T_NATIVE_UINT64, nullptr);
}

void Group::write_selection(const std::string& name, Rows rows, hid_t memory_type,
                            const void* data) {
  if (rows.rows == 0) return;
  Handle set(H5Dopen2(handle_.get(), name.c_str(), H5P_DEFAULT), H5Dclose);
  const Handle file_space(set.valid() ? H5Dget_space(set.get()) : H5I_INVALID_HID, H5Sclose);
  const int dims = rows.columns > 1 ? 2 : 1;
  const hsize_t start[2] = {rows.first, 0}, size[2] = {rows.rows, rows.columns};
  const Handle memory_space(H5Screate_simple(dims, size, nullptr), H5Sclose);
  if (!file_space.valid() || !memory_space.valid() ||
      H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, size, nullptr) < 0 ||
      H5Dwrite(set.get(), memory_type, memory_space.get(), file_space.get(), H5P_DEFAULT, data) <
          0 ||
      !set.close()) {  // closing writes what libhdf5 kept in its sieve buffer: a failure too
    fail(fmt::format("{}: cannot write rows {} to {}{}", where(name), rows.first,
                     rows.first + rows.rows, library_reason()));
  }
}

void Group::write_values_at(const std::string& name, std::uint64_t first,
                            std::span<const double> values, Precision precision) {
  const Rows rows{first, values.size(), 1};
  if (precision == Precision::Double) {
    write_selection(name, rows, H5T_NATIVE_DOUBLE, values.data());
  } else {
    write_selection(name, rows, H5T_NATIVE_FLOAT, to_float(values).data());
  }
}

void Group::write_rows_at(const std::string& name, std::uint64_t first, std::span<const double> x,
                          std::span<const double> y, std::span<const double> z,
                          Precision precision) {
  std::vector<double> rows(3 * x.size());  // n x 3, row-major, as write_rows
  for (std::size_t i = 0; i < x.size(); ++i) {
    rows[3 * i] = x[i];
    rows[3 * i + 1] = y[i];
    rows[3 * i + 2] = z[i];
  }
  const Rows selection{first, x.size(), 3};
  if (precision == Precision::Double) {
    write_selection(name, selection, H5T_NATIVE_DOUBLE, rows.data());
  } else {
    write_selection(name, selection, H5T_NATIVE_FLOAT, to_float(rows).data());
  }
}

void Group::write_ids_at(const std::string& name, std::uint64_t first,
                         std::span<const std::uint64_t> ids) {
  write_selection(name, {first, ids.size(), 1}, H5T_NATIVE_UINT64, ids.data());
}

Handle Group::open_dataset(const std::string& name) const {
  if (!has(name)) fail(fmt::format("{} is missing", where(name)));
  check_object(name);
  Handle set(H5Dopen2(handle_.get(), name.c_str(), H5P_DEFAULT), H5Dclose);
  if (!set.valid()) fail(fmt::format("{}: cannot open as a dataset {}", where(name), kCorrupt));
  return set;
}

Shape Group::dataset_shape(const std::string& name) const {
  const Handle set = open_dataset(name);
  const Handle space(H5Dget_space(set.get()), H5Sclose);
  return extent_of(where(name), space.get(), *this);
}

void Group::read_dataset(const std::string& name, hid_t memory_type, void* data, std::size_t count,
                         Rows rows) const {
  const Handle set = open_dataset(name);
  if (count == 0) return;
  if (rows.columns == 0) {
    if (H5Dread(set.get(), memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
      fail(fmt::format("{}: cannot read {}", where(name), kCorrupt));
    return;
  }
  // The rows alone: a hyperslab of the file's space, into a block of rows x columns.
  const Handle file_space(H5Dget_space(set.get()), H5Sclose);
  const int dims = rows.columns > 1 ? 2 : 1;
  const hsize_t start[2] = {rows.first, 0}, size[2] = {rows.rows, rows.columns};
  if (!file_space.valid() ||
      H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, size, nullptr) < 0)
    fail(fmt::format("{}: cannot select rows {} to {} {}", where(name), rows.first,
                     rows.first + rows.rows, kCorrupt));
  const Handle memory_space(H5Screate_simple(dims, size, nullptr), H5Sclose);
  if (!memory_space.valid() ||
      H5Dread(set.get(), memory_type, memory_space.get(), file_space.get(), H5P_DEFAULT, data) < 0)
    fail(fmt::format("{}: cannot read {}", where(name), kCorrupt));
}

/// Before anything is allocated for a dataset: its type is a number we read exactly, its
/// extent fits in memory and, stored contiguously, in the file; stored compact, in its header.
void Group::check_readable(const std::string& name, hid_t set, bool allow_float,
                           const hsize_t* reading) const {
  const Handle type(H5Dget_type(set), H5Tclose);
  if (!type.valid()) fail(fmt::format("{}: cannot read its datatype {}", where(name), kCorrupt));
  check_number_type(type.get(), where(name), *this, allow_float);
  const Handle space(H5Dget_space(set), H5Sclose);
  if (!space.valid()) fail(fmt::format("{}: cannot read its shape {}", where(name), kCorrupt));
  const hsize_t count = element_count(extent_of(where(name), space.get(), *this));
  check_memory(where(name), reading ? *reading : count, 8, *this);
  const Handle plist(H5Dget_create_plist(set), H5Pclose);
  // Compact data lives in the object header: libhdf5 copies count x element bytes from it
  // whatever it holds (a corrupt header with none made H5Dread read address 0).
  if (plist.valid() && H5Pget_layout(plist.get()) == H5D_COMPACT) {
    const hsize_t stored = H5Dget_storage_size(set);
    const std::size_t element = H5Tget_size(type.get());
    if (count > 0 && (element == 0 || stored / element < count)) {
      fail(fmt::format("{}: its {} values of {} bytes are stored in {} bytes {}", where(name),
                       count, element, stored, kCorrupt));
    }
  }
  if (plist.valid() && H5Pget_layout(plist.get()) == H5D_CONTIGUOUS && !source_.empty()) {
    const haddr_t offset = H5Dget_offset(set);
    const std::size_t element = H5Tget_size(type.get());
    std::error_code ec;
    const std::uintmax_t file_bytes = std::filesystem::file_size(source_, ec);
    if (!ec && count > 0 && offset != HADDR_UNDEF &&
        (offset > file_bytes || count > (file_bytes - offset) / element)) {
      fail(fmt::format("{}: its {} values of {} bytes lie past the end of the file {}", where(name),
                       count, element, kCorrupt));
    }
  }
}

std::vector<double> Group::read_doubles(const std::string& name) const {
  const Handle set = open_dataset(name);
  check_readable(name, set.get(), true);
  std::vector<double> values(static_cast<std::size_t>(element_count(dataset_shape(name))));
  read_dataset(name, H5T_NATIVE_DOUBLE, values.data(), values.size());
  return values;
}

std::vector<double> Group::read_doubles(const std::string& name, std::uint64_t first,
                                        std::uint64_t rows, std::size_t columns) const {
  const Handle set = open_dataset(name);
  const hsize_t reading = rows * columns;
  check_readable(name, set.get(), true, &reading);
  std::vector<double> values(static_cast<std::size_t>(reading));
  read_dataset(name, H5T_NATIVE_DOUBLE, values.data(), values.size(), {first, rows, columns});
  return values;
}

std::vector<std::uint64_t> Group::read_ids(const std::string& name) const {
  const auto count = element_count(dataset_shape(name));
  return read_id_rows(name, 0, count, {});  // every element (H5S_ALL)
}

std::vector<std::uint64_t> Group::read_ids(const std::string& name, std::uint64_t first,
                                           std::uint64_t rows) const {
  return read_id_rows(name, first, rows, {first, rows, 1});
}

std::vector<std::uint64_t> Group::read_id_rows(const std::string& name, std::uint64_t first,
                                               std::uint64_t rows, Rows selection) const {
  const Handle set = open_dataset(name);
  const hsize_t reading = rows;
  check_readable(name, set.get(), false, &reading);
  const Handle type(H5Dget_type(set.get()), H5Tclose);
  const auto count = static_cast<std::size_t>(rows);
  std::vector<std::uint64_t> ids(count);
  if (H5Tget_sign(type.get()) == H5T_SGN_2) {
    // Read signed ids as signed, so that a negative id is reported, not clipped to 0.
    std::vector<std::int64_t> signed_ids(count);
    read_dataset(name, H5T_NATIVE_INT64, signed_ids.data(), count, selection);
    for (std::size_t i = 0; i < count; ++i) {
      if (signed_ids[i] < 0) {
        fail(fmt::format("{}[{}] is {} (ids must be positive)", where(name), first + i,
                         signed_ids[i]));
      }
      ids[i] = static_cast<std::uint64_t>(signed_ids[i]);
    }
  } else {
    read_dataset(name, H5T_NATIVE_UINT64, ids.data(), count, selection);
  }
  return ids;
}

}  // namespace nbody::hdf5
