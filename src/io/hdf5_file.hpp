#pragma once
// Small RAII wrappers over the HDF5 C API for the snapshot and checkpoint formats: an
// owned hid_t, a File, and a Group that reads and writes the few things those formats
// need (1-D and N x 3 datasets as float or double, unsigned ids, numeric and string
// attributes). Every failure throws nbody::Error naming the file and the object, e.g.
// "snap.hdf5: /PartType1/Masses: cannot read (truncated or corrupt?)"; the library's own
// error-stack printing is switched off. Internal to src/io (hdf5.h stays out of the
// public headers).
#include <hdf5.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "io/direct_writer.hpp"
#include "nbody/input_error.hpp"

namespace nbody::hdf5 {

/// Switches off HDF5's printing of its error stack to stderr (once per process): our
/// messages name the file and object instead.
void silence_library_errors();

/// An owned hid_t, released by the H5*close function it was opened for.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, Closer closer) : id_(id), close_(closer) {}
  Handle(Handle&& other) noexcept
      : id_(std::exchange(other.id_, H5I_INVALID_HID)), close_(other.close_) {}
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) {
      (void)close();
      id_ = std::exchange(other.id_, H5I_INVALID_HID);
      close_ = other.close_;
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { (void)close(); }

  [[nodiscard]] hid_t get() const { return id_; }
  [[nodiscard]] bool valid() const { return id_ >= 0; }
  /// Closes now; false when the library reports an error (for a file: a failed flush).
  bool close() noexcept;

 private:
  hid_t id_ = H5I_INVALID_HID;
  Closer close_ = nullptr;
};

/// Storage type of floating-point datasets.
enum class Precision { Float, Double };

/// Shape of a dataset or attribute: one extent per dimension (empty for a scalar).
using Shape = std::vector<hsize_t>;

/// A dataset's rows [first, first + rows) of `columns` values each (Group's reads); columns
/// 0: every element.
struct Rows {
  std::uint64_t first = 0, rows = 0;
  std::size_t columns = 0;
};

/// A group (the root group "/" included), with the file name and its own path for messages.
class Group {
 public:
  /// `source` is the path of a file opened for reading (its objects' headers are checked
  /// in its bytes before libhdf5 decodes them); empty for a file being written.
  Group(Handle handle, std::string file, std::string path, std::string source = {},
        hid_t file_id = H5I_INVALID_HID)
      : handle_(std::move(handle)),
        file_(std::move(file)),
        path_(std::move(path)),
        source_(std::move(source)),
        file_id_(file_id) {}

  [[nodiscard]] const std::string& file() const { return file_; }
  /// "/PartType1/Masses" for name "Masses" (the object's path inside the file).
  [[nodiscard]] std::string where(const std::string& name) const;
  /// Throws nbody::Error("FILE: problem").
  [[noreturn]] void fail(const std::string& problem) const;
  /// Throws nbody::input_error: "FILE: WHERE: WHAT (got VALUE)"; `where` is a path in the
  /// file ("/PartType1/Masses[17]").
  template <class Value>
  [[noreturn]] void refuse(const std::string& where, const std::string& what,
                           const Value& value) const {
    throw input_error(file_ + ": " + where, what, value);
  }

  /// A link of this name exists (an error of the library is a corrupt file, not "no").
  [[nodiscard]] bool has(const std::string& name) const;
  [[nodiscard]] bool has_attribute(const std::string& name) const;
  [[nodiscard]] Group create_group(const std::string& name);
  /// Throws "FILE: /name is missing" when there is no such group.
  [[nodiscard]] Group open_group(const std::string& name) const;
  /// A second name for an existing object (a hard link; no data copied).
  void link(const std::string& name, const std::string& target_path);

  // ---- Datasets. Writers take N values (or N rows), readers check the class (numeric;
  // integer for ids) and convert to float64 / uint64.
  void write_rows(const std::string& name, const std::vector<double>& x,
                  const std::vector<double>& y, const std::vector<double>& z, Precision precision);
  void write_values(const std::string& name, const std::vector<double>& values,
                    Precision precision);
  void write_ids(const std::string& name, const std::vector<std::uint64_t>& ids);
  /// Datasets written in parts (by several ranks at once, written_together.hpp): one of
  /// `rows` rows of `columns` values (1: a 1-D dataset) stored as `precision`, or of ids,
  /// made at its full size (its bytes placed in the file, not written); then rows
  /// [first, first + n) of it, from n values (or n rows of x, y, z).
  void create_values(const std::string& name, std::uint64_t rows, std::size_t columns,
                     Precision precision);
  /// narrow: 32-bit ids (GADGET's default, every id below 2^32), else 64-bit.
  void create_ids(const std::string& name, std::uint64_t rows, bool narrow = false);
  void write_values_at(const std::string& name, std::uint64_t first, std::span<const double> values,
                       Precision precision);
  void write_rows_at(const std::string& name, std::uint64_t first, std::span<const double> x,
                     std::span<const double> y, std::span<const double> z, Precision precision);
  void write_ids_at(const std::string& name, std::uint64_t first,
                    std::span<const std::uint64_t> ids, bool narrow = false);
  /// Throws "FILE: /name is missing" when there is no such dataset.
  [[nodiscard]] Shape dataset_shape(const std::string& name) const;
  /// Every element in storage order (row-major).
  [[nodiscard]] std::vector<double> read_doubles(const std::string& name) const;
  /// Integer datasets only; negative values are refused.
  [[nodiscard]] std::vector<std::uint64_t> read_ids(const std::string& name) const;
  /// Rows [first, first + rows) of a dataset of N rows of `columns` values (a selection:
  /// nothing else is read), as read_doubles / read_ids; the caller checks the shape.
  [[nodiscard]] std::vector<double> read_doubles(const std::string& name, std::uint64_t first,
                                                 std::uint64_t rows, std::size_t columns) const;
  [[nodiscard]] std::vector<std::uint64_t> read_ids(const std::string& name, std::uint64_t first,
                                                    std::uint64_t rows) const;
  /// The same into arrays the caller holds (no copy of a rank's share: at 2^29 bodies a
  /// rank, each one was GBs of new memory): rows [first, first + out.size()) of a 1-D
  /// dataset; of an N x 3 one, split into x, y and z, read in blocks of rows.
  void read_doubles_into(const std::string& name, std::uint64_t first, std::span<double> out) const;
  void read_rows_into(const std::string& name, std::uint64_t first, std::span<double> x,
                      std::span<double> y, std::span<double> z) const;

  // ---- Attributes: scalars, 1-D arrays, one string.
  void write_attribute(const std::string& name, double value);
  void write_attribute(const std::string& name, std::int32_t value);
  void write_attribute(const std::string& name, std::uint64_t value);
  void write_attribute(const std::string& name, const std::vector<double>& values);
  void write_attribute(const std::string& name, const std::vector<std::uint32_t>& values);
  void write_attribute(const std::string& name, const std::string& value);
  /// Throws "FILE: /name is missing" when there is no such attribute.
  [[nodiscard]] std::vector<double> read_attribute_doubles(const std::string& name) const;
  [[nodiscard]] std::vector<std::uint64_t> read_attribute_uint64(const std::string& name) const;
  /// A scalar (or one-element) numeric attribute.
  [[nodiscard]] double read_attribute_double(const std::string& name) const;
  [[nodiscard]] std::uint64_t read_attribute_count(const std::string& name) const;
  [[nodiscard]] std::string read_attribute_string(const std::string& name) const;
  /// Bytes per element as stored (4 for uint32), for GADGET's 32-bit count convention.
  [[nodiscard]] std::size_t attribute_element_size(const std::string& name) const;

 private:
  [[nodiscard]] Handle open_dataset(const std::string& name) const;
  [[nodiscard]] Handle open_attribute(const std::string& name) const;
  void write_dataset(const std::string& name, const Shape& shape, hid_t file_type,
                     hid_t memory_type, const void* data);
  /// Rows [first, first + rows) of `columns` values of an existing dataset, from `data`.
  void write_selection(const std::string& name, Rows rows, hid_t memory_type, const void* data);
  /// The same in blocks: `fill(begin, count, out)` writes rows [begin, begin + count) of the
  /// selection (counted from its first) into `out`, values of `value_bytes` each; with
  /// value_bytes 0, one write from `direct` (write_selection).
  using BlockFill = std::function<void(std::uint64_t begin, std::uint64_t count, void* out)>;
  void write_blocks(const std::string& name, Rows rows, hid_t memory_type, std::size_t value_bytes,
                    const BlockFill& fill, const void* direct = nullptr);
  /// `reading`: the elements that will be read (all of them when not given).
  void check_readable(const std::string& name, hid_t set, bool allow_float,
                      const hsize_t* reading = nullptr) const;
  void read_dataset(const std::string& name, hid_t memory_type, void* data, std::size_t count,
                    Rows rows = {}) const;
  /// read_ids' work: `rows` ids from `first` (messages' indices), `selection` as read_dataset.
  [[nodiscard]] std::vector<std::uint64_t> read_id_rows(const std::string& name,
                                                        std::uint64_t first, std::uint64_t rows,
                                                        Rows selection) const;
  void write_numeric_attribute(const std::string& name, const Shape& shape, hid_t file_type,
                               hid_t memory_type, const void* data);
  void read_numeric_attribute(const std::string& name, hid_t memory_type, void* data,
                              std::size_t count) const;
  [[nodiscard]] std::size_t attribute_size(const std::string& name) const;
  /// Reading: the header of the object `name` links to, checked in the file's bytes.
  void check_object(const std::string& name) const;

  friend class File;  // closes its root group before the file
  Handle handle_;
  io_detail::RowFiles rows_files_;  // File::open_rows': the rows go there, not through libhdf5
  std::string file_;
  std::string path_;
  std::string source_;
  hid_t file_id_ = H5I_INVALID_HID;  // not owned: the File's
};

/// An open HDF5 file. `name` is what messages call it (the target path when writing a
/// temporary that will be renamed into place).
class File {
 public:
  /// Creates (truncates) path for writing.
  [[nodiscard]] static File create(const std::filesystem::path& path, const std::string& name);
  /// Opens path read-only. Throws "FILE: cannot open file (...)" when it is missing and
  /// "FILE: not a readable HDF5 file (truncated or corrupt?)" when HDF5 cannot open it.
  [[nodiscard]] static File open(const std::filesystem::path& path);
  /// Opens a file this run laid out (created, its datasets made at full size by
  /// create_values and create_ids, closed) to write rows into those datasets, at once with
  /// other processes: libhdf5 reads the layout, and the rows go straight to their bytes by
  /// pwrite (written_together.hpp: no two writers touch the same bytes, none the
  /// metadata), their aligned middles with O_DIRECT where the file system takes it
  /// (DirectWriter); `name` as in create().
  [[nodiscard]] static File open_rows(const std::filesystem::path& path, const std::string& name);
  File(File&& other) noexcept;
  File& operator=(File&&) = delete;
  File(const File&) = delete;
  ~File();

  [[nodiscard]] Group& root() { return root_; }
  [[nodiscard]] const Group& root() const { return root_; }
  /// Flushes and closes; throws when that fails (disk full). Every Group opened from this
  /// file must be gone by then.
  void close();

 private:
  /// `source`: the path being read (its bytes are checked), empty when writing.
  File(Handle file, const std::string& name, const std::string& source);
  Handle file_;
  Group root_;
  io_detail::RowFiles rows_files_;  // open_rows'; root_ and its groups write through them
};

}  // namespace nbody::hdf5
