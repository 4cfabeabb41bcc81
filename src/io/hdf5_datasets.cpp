// The datasets of hdf5_file.hpp's Group: 1-D and N x 3 floating-point datasets stored as
// float or double, unsigned 64-bit ids; readers check the class and convert.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <optional>

#include "io/hdf5_detail.hpp"
#include "io/hdf5_file.hpp"

namespace nbody::hdf5 {

using namespace detail;

// ---- Group: datasets ---------------------------------------------------------------

void Group::write_dataset(const std::string& name, const Shape& shape, hid_t file_type,
                          hid_t memory_type, const void* data) {
  const Handle properties = untimed(H5P_DATASET_CREATE);
  // A dataset written in parts gets its bytes now and no fill: its rows then go straight
  // to them (File::open_rows), from every rank at once.
  if (data == nullptr && element_count(shape) > 0 &&
      (H5Pset_alloc_time(properties.get(), H5D_ALLOC_TIME_EARLY) < 0 ||
       H5Pset_fill_time(properties.get(), H5D_FILL_TIME_NEVER) < 0)) {
    fail(fmt::format("{}: cannot create dataset{}", where(name), library_reason()));
  }
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
  create_values(name, x.size(), 3, precision);
  write_rows_at(name, 0, x, y, z, precision);
}

void Group::write_values(const std::string& name, const std::vector<double>& values,
                         Precision precision) {
  create_values(name, values.size(), 1, precision);
  write_values_at(name, 0, values, precision);
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

void Group::create_ids(const std::string& name, std::uint64_t rows, bool narrow) {
  write_dataset(name, Shape{rows}, narrow ? H5T_STD_U32LE : H5T_STD_U64LE,
                narrow ? H5T_NATIVE_UINT32 : H5T_NATIVE_UINT64, nullptr);
}

namespace {

/// What write_blocks converts at a time: 2^18 rows of 3 doubles are 6 MB, warm in the cache,
/// where one conversion of a rank's whole share (12.9 GB for 2^29 bodies' positions in
/// double) cost more than its writing (docs/snapshots.md, "Large files").
constexpr std::uint64_t kBlockRows = std::uint64_t(1) << 18;

/// out[i * stride + column] = To(values[begin + i]) for i < count.
template <class To>
void put_column(std::span<const double> values, std::uint64_t begin, std::uint64_t count,
                std::size_t stride, std::size_t column, void* out) {
  To* o = static_cast<To*>(out);
  const double* v = values.data() + begin;
  for (std::uint64_t i = 0; i < count; ++i) o[i * stride + column] = To(v[i]);
}

}  // namespace

void Group::write_selection(const std::string& name, Rows rows, hid_t memory_type,
                            const void* data) {
  write_blocks(name, rows, memory_type, 0, {}, data);
}

void Group::write_blocks(const std::string& name, Rows rows, hid_t memory_type,
                         std::size_t value_bytes, const BlockFill& fill, const void* direct) {
  if (rows.rows == 0) return;
  Handle set(H5Dopen2(handle_.get(), name.c_str(), H5P_DEFAULT), H5Dclose);
  const Handle file_space(set.valid() ? H5Dget_space(set.get()) : H5I_INVALID_HID, H5Sclose);
  const int dims = rows.columns > 1 ? 2 : 1;
  bool written = set.valid() && file_space.valid();
  // Raw rows (File::open_rows): the dataset's bytes, stored as the memory holds them (both
  // little-endian IEEE or uint64: H5Tequal), at their place in the file.
  const std::size_t row_bytes = rows.columns * H5Tget_size(memory_type);
  std::optional<io_detail::DirectWriter> out;
  if (written && rows_files_.buffered >= 0) {
    const Handle stored(H5Dget_type(set.get()), H5Tclose);
    hsize_t extent[2] = {0, 0};
    const haddr_t at = H5Dget_offset(set.get());
    written = at != HADDR_UNDEF && stored.valid() && H5Tequal(stored.get(), memory_type) > 0 &&
              H5Sget_simple_extent_dims(file_space.get(), extent, nullptr) == dims &&
              rows.first + rows.rows <= extent[0];
    if (written) out.emplace(rows_files_, at + rows.first * row_bytes);
  }
  // value_bytes 0: `direct` holds every row; else blocks of kBlockRows through `buffer`.
  const std::uint64_t block = value_bytes == 0 ? rows.rows : kBlockRows;
  std::vector<unsigned char> buffer(std::min(rows.rows, block) * rows.columns * value_bytes);
  for (std::uint64_t done = 0; written && done < rows.rows; done += block) {
    const std::uint64_t count = std::min(block, rows.rows - done);
    if (fill) fill(done, count, buffer.data());
    const void* from = value_bytes == 0 ? direct : buffer.data();
    if (out) {
      written = out->append(from, count * row_bytes);
      continue;
    }
    const hsize_t start[2] = {rows.first + done, 0}, size[2] = {count, rows.columns};
    const Handle memory_space(H5Screate_simple(dims, size, nullptr), H5Sclose);
    written =
        memory_space.valid() &&
        H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, size, nullptr) >= 0 &&
        H5Dwrite(set.get(), memory_type, memory_space.get(), file_space.get(), H5P_DEFAULT, from) >=
            0;
  }
  if (out && written) written = out->finish();
  // Closing writes what libhdf5 kept in its sieve buffer: a failure too.
  if (!written || !set.close()) {
    const bool system = out && !out->reason().empty();
    fail(fmt::format("{}: cannot write rows {} to {}{}", where(name), rows.first,
                     rows.first + rows.rows,
                     system ? " (" + out->reason() + ")" : library_reason()));
  }
}

void Group::write_values_at(const std::string& name, std::uint64_t first,
                            std::span<const double> values, Precision precision) {
  const Rows rows{first, values.size(), 1};
  if (precision == Precision::Double) {
    write_selection(name, rows, H5T_NATIVE_DOUBLE, values.data());
    return;
  }
  write_blocks(name, rows, H5T_NATIVE_FLOAT, sizeof(float),
               [&](std::uint64_t begin, std::uint64_t count, void* out) {
                 put_column<float>(values, begin, count, 1, 0, out);
               });
}

void Group::write_rows_at(const std::string& name, std::uint64_t first, std::span<const double> x,
                          std::span<const double> y, std::span<const double> z,
                          Precision precision) {
  const bool wide = precision == Precision::Double;
  const std::span<const double> columns[3] = {x, y, z};
  // n x 3, row-major, as write_rows
  write_blocks(name, {first, x.size(), 3}, wide ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT,
               wide ? sizeof(double) : sizeof(float),
               [&](std::uint64_t begin, std::uint64_t count, void* out) {
                 for (std::size_t k = 0; k < 3; ++k) {
                   if (wide)
                     put_column<double>(columns[k], begin, count, 3, k, out);
                   else
                     put_column<float>(columns[k], begin, count, 3, k, out);
                 }
               });
}

void Group::write_ids_at(const std::string& name, std::uint64_t first,
                         std::span<const std::uint64_t> ids, bool narrow) {
  if (!narrow) {
    write_selection(name, {first, ids.size(), 1}, H5T_NATIVE_UINT64, ids.data());
    return;
  }
  write_blocks(name, {first, ids.size(), 1}, H5T_NATIVE_UINT32, sizeof(std::uint32_t),
               [&](std::uint64_t begin, std::uint64_t count, void* out) {
                 auto* o = static_cast<std::uint32_t*>(out);
                 for (std::uint64_t i = 0; i < count; ++i)
                   o[i] = static_cast<std::uint32_t>(ids[begin + i]);
               });
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

void Group::read_doubles_into(const std::string& name, std::uint64_t first,
                              std::span<double> out) const {
  const Handle set = open_dataset(name);
  const hsize_t reading = out.size();
  check_readable(name, set.get(), true, &reading);
  read_dataset(name, H5T_NATIVE_DOUBLE, out.data(), out.size(), {first, out.size(), 1});
}

void Group::read_rows_into(const std::string& name, std::uint64_t first, std::span<double> x,
                           std::span<double> y, std::span<double> z) const {
  const Handle set = open_dataset(name);
  const hsize_t reading = 3 * x.size();
  check_readable(name, set.get(), true, &reading);
  std::vector<double> block(3 * std::min<std::uint64_t>(x.size(), kBlockRows));
  for (std::uint64_t done = 0; done < x.size(); done += kBlockRows) {
    const std::uint64_t count = std::min<std::uint64_t>(kBlockRows, x.size() - done);
    read_dataset(name, H5T_NATIVE_DOUBLE, block.data(), 3 * count, {first + done, count, 3});
    for (std::uint64_t i = 0; i < count; ++i) {
      x[done + i] = block[3 * i];
      y[done + i] = block[3 * i + 1];
      z[done + i] = block[3 * i + 2];
    }
  }
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
