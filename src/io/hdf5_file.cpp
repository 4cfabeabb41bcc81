// The HDF5 wrappers of hdf5_file.hpp: handles, files and groups. Datasets are in
// hdf5_datasets.cpp, attributes in hdf5_attributes.cpp. Files use the library's default
// (oldest) format version, so any HDF5 1.8+ reader (h5py, yt, pynbody, GADGET, SWIFT tools)
// opens them.
#include "io/hdf5_file.hpp"
#include "core/machine_memory.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <mutex>
#include <utility>

#include "io/hdf5_detail.hpp"
#include "nbody/error.hpp"

namespace nbody::hdf5 {

namespace detail {

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
  hsize_t n = 1;  // element_count must not wrap
  for (hsize_t d : shape) {
    if (d != 0 && n > (hsize_t{1} << 62) / d) {
      group.fail(fmt::format("{}: its shape has more than 2^62 elements {}", what, kCorrupt));
    }
    n *= d;
  }
  return shape;
}

namespace {

/// H5Ewalk2 callback: keeps the text of the last "error message = '...'" (the sec2 driver's
/// strerror) of the stack.
herr_t find_reason(unsigned /*n*/, const H5E_error2_t* error, void* data) {
  if (error == nullptr || error->desc == nullptr) return 0;
  const std::string desc = error->desc;
  const std::string key = "error message = '";
  const auto at = desc.find(key);
  if (at != std::string::npos) {
    const auto end = desc.find('\'', at + key.size());
    if (end != std::string::npos) {
      *static_cast<std::string*>(data) = desc.substr(at + key.size(), end - at - key.size());
    }
  }
  return 0;
}

}  // namespace

std::string library_reason() {
  std::string reason;
  const hid_t stack = H5Eget_current_stack();  // also clears the default stack
  if (stack < 0) return {};
  H5Ewalk2(stack, H5E_WALK_DOWNWARD, find_reason, &reason);
  H5Eclose_stack(stack);
  return reason.empty() ? std::string() : " (" + reason + ")";
}

void check_number_type(hid_t type, const std::string& what, const Group& group, bool allow_float) {
  const H5T_class_t cls = H5Tget_class(type);
  if (cls < 0) group.fail(fmt::format("{}: cannot read its datatype {}", what, kCorrupt));
  if (cls == H5T_FLOAT && allow_float) {
    for (hid_t ieee : {H5T_IEEE_F32LE, H5T_IEEE_F32BE, H5T_IEEE_F64LE, H5T_IEEE_F64BE}) {
      if (H5Tequal(type, ieee) > 0) return;
    }
    group.fail(fmt::format("{}: its floating-point type is not IEEE float32 or float64 {}", what,
                           kCorrupt));
  }
  if (cls == H5T_INTEGER) {
    const std::size_t size = H5Tget_size(type);
    const std::size_t precision = H5Tget_precision(type);
    if ((size == 1 || size == 2 || size == 4 || size == 8) && precision == 8 * size &&
        H5Tget_offset(type) == 0 && H5Tget_sign(type) != H5T_SGN_ERROR &&
        H5Tget_order(type) != H5T_ORDER_ERROR) {
      return;
    }
    group.fail(fmt::format("{}: its integer type ({} bytes, {} bits) is not a standard one {}",
                           what, size, precision, kCorrupt));
  }
  group.fail(fmt::format("{} {}", what, allow_float ? "is not numeric" : "does not hold integers"));
}

void check_memory(const std::string& what, std::uint64_t count, std::uint64_t bytes_each,
                  const Group& group) {
  const double machine = machine_memory_bytes();
  const double needed = double(count) * double(bytes_each);
  if (machine > 0 && needed > machine) {
    group.fail(fmt::format(
        "{}: {} values need {:.0f} bytes of memory, more than this machine's {:.0f} bytes (got {})",
        what, count, needed, machine, count));
  }
}

Handle untimed(hid_t property_class) {
  Handle plist(H5Pcreate(property_class), H5Pclose);
  H5Pset_obj_track_times(plist.get(), false);
  return plist;
}

}  // namespace detail

using namespace detail;

namespace {

/// File access without POSIX locks: some NFS and Lustre mounts refuse locked opens, and
/// no two of our writers ever share a file (each writes its own temporary).
Handle file_access() {
  Handle plist(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
#if H5_VERSION_GE(1, 10, 7)
  H5Pset_file_locking(plist.get(), false, true);
#endif
  return plist;
}

}  // namespace

void silence_library_errors() {
  static std::once_flag once;
  std::call_once(once, [] {
    // libhdf5 1.10 keeps the id of a file whose H5Fclose failed (a full disk), but frees
    // the file: its atexit handler then closes it again and crashes after our message. Our
    // files are closed by their handles (or have failed, and their temporaries are gone),
    // so the handler has nothing to do. Must come before any other library call.
    H5dont_atexit();
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  });
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
  const htri_t exists = H5Lexists(handle_.get(), name.c_str(), H5P_DEFAULT);
  if (exists < 0) fail(fmt::format("{}: cannot look it up {}", where(name), kCorrupt));
  return exists > 0;
}

bool Group::has_attribute(const std::string& name) const {
  // Safe on a file being read: open_group and File::open checked this group's header.
  const htri_t exists = H5Aexists(handle_.get(), name.c_str());
  if (exists < 0) fail(fmt::format("{}: cannot look it up {}", where(name), kCorrupt));
  return exists > 0;
}

void Group::check_object(const std::string& name) const {
  if (source_.empty()) return;
#if H5_VERSION_GE(1, 12, 0)
  H5L_info2_t info{};
  const bool ok = H5Lget_info2(handle_.get(), name.c_str(), &info, H5P_DEFAULT) >= 0;
#else
  H5L_info_t info{};
  const bool ok = H5Lget_info(handle_.get(), name.c_str(), &info, H5P_DEFAULT) >= 0;
#endif
  if (!ok) fail(fmt::format("{}: cannot read its link {}", where(name), kCorrupt));
  if (info.type != H5L_TYPE_HARD) {
    fail(fmt::format("{}: is a soft or external link (not supported)", where(name)));
  }
#if H5_VERSION_GE(1, 12, 0)
  haddr_t address = HADDR_UNDEF;
  if (H5VLnative_token_to_addr(file_id_, info.u.token, &address) < 0) {
    fail(fmt::format("{}: cannot read its link {}", where(name), kCorrupt));
  }
#else
  const haddr_t address = info.u.address;
#endif
  check_header(file_id_, source_, address, where(name), *this);
}

Group Group::create_group(const std::string& name) {
  const Handle properties = untimed(H5P_GROUP_CREATE);
  Handle g(H5Gcreate2(handle_.get(), name.c_str(), H5P_DEFAULT, properties.get(), H5P_DEFAULT),
           H5Gclose);
  if (!g.valid()) fail(fmt::format("{}: cannot create group{}", where(name), library_reason()));
  return Group(std::move(g), file_, where(name));
}

Group Group::open_group(const std::string& name) const {
  if (!has(name)) fail(fmt::format("{} is missing", where(name)));
  check_object(name);
  Handle g(H5Gopen2(handle_.get(), name.c_str(), H5P_DEFAULT), H5Gclose);
  if (!g.valid()) fail(fmt::format("{}: cannot open as a group {}", where(name), kCorrupt));
  Group opened(std::move(g), file_, where(name), source_, file_id_);
  opened.rows_files_ = rows_files_;
  return opened;
}

void Group::link(const std::string& name, const std::string& target_path) {
  if (H5Lcreate_hard(handle_.get(), target_path.c_str(), handle_.get(), name.c_str(), H5P_DEFAULT,
                     H5P_DEFAULT) < 0) {
    fail(fmt::format("{}: cannot link to {}{}", where(name), target_path, library_reason()));
  }
}

// ---- File --------------------------------------------------------------------------

File::File(Handle file, const std::string& name, const std::string& source)
    : file_(std::move(file)),
      root_(Handle(H5Gopen2(file_.get(), "/", H5P_DEFAULT), H5Gclose), name, "/", source,
            file_.get()) {
  if (!root_.handle_.valid()) root_.fail(fmt::format("cannot open its root group {}", kCorrupt));
  if (source.empty()) return;
  check_superblock(file_.get(), source, root_);
  haddr_t address = HADDR_UNDEF;
#if H5_VERSION_GE(1, 12, 0)
  H5O_info2_t info{};
  if (H5Oget_info3(root_.handle_.get(), &info, H5O_INFO_BASIC) < 0 ||
      H5VLnative_token_to_addr(file_.get(), info.token, &address) < 0) {
    root_.fail(fmt::format("cannot read its root group {}", kCorrupt));
  }
#else
  H5O_info_t info{};
  if (H5Oget_info2(root_.handle_.get(), &info, H5O_INFO_BASIC) < 0) {
    root_.fail(fmt::format("cannot read its root group {}", kCorrupt));
  }
  address = info.addr;
#endif
  check_header(file_.get(), source, address, "/", root_);
}

File File::create(const std::filesystem::path& path, const std::string& name) {
  silence_library_errors();
  Handle file(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, file_access().get()), H5Fclose);
  if (!file.valid()) {
    const std::string reason = library_reason();
    throw Error(fmt::format("{}: cannot write file (HDF5 cannot create '{}'{})", name,
                            path.string(), reason));
  }
  return File(std::move(file), name, {});
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
  check_superblock_bytes(name);
  Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, file_access().get()), H5Fclose);
  if (!file.valid()) throw Error(fmt::format("{}: not a readable HDF5 file {}", name, kCorrupt));
  return File(std::move(file), name, name);
}

File File::open_rows(const std::filesystem::path& path, const std::string& name) {
  silence_library_errors();
  Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, file_access().get()), H5Fclose);
  const std::string reason = file.valid() ? std::string() : library_reason();
  const int fd = file.valid() ? ::open(path.c_str(), O_WRONLY | O_CLOEXEC) : -1;
  if (fd < 0) {
    throw Error(fmt::format("{}: cannot write file (cannot open '{}'{})", name, path.string(),
                            file.valid() ? ": " + std::string(std::strerror(errno)) : reason));
  }
  File opened(std::move(file), name, {});
  // O_DIRECT where the file system takes it (not tmpfs): the page cache is the slow part.
  opened.rows_files_ = {fd, ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_DIRECT)};
  opened.root_.rows_files_ = opened.rows_files_;
  return opened;
}

File::File(File&& other) noexcept
    : file_(std::move(other.file_)),
      root_(std::move(other.root_)),
      rows_files_(std::exchange(other.rows_files_, {})) {}

File::~File() {
  for (const int fd : {rows_files_.buffered, rows_files_.direct})
    if (fd >= 0) ::close(fd);
}

void File::close() {
  root_.handle_.close();
  // The rows written by pwrite: a failure to close (NFS reports a full disk here) loses them.
  for (int* fd : {&rows_files_.buffered, &rows_files_.direct}) {
    if (*fd >= 0 && ::close(std::exchange(*fd, -1)) != 0)
      root_.fail(fmt::format("cannot write file ({})", std::strerror(errno)));
  }
  // Flush explicitly: a full disk shows up here, while H5Fclose on a still-referenced
  // file would only drop our handle.
  const bool flushed = H5Fflush(file_.get(), H5F_SCOPE_GLOBAL) >= 0;
  std::string reason = flushed ? std::string() : library_reason();
  const bool closed = file_.close();
  if (closed && flushed) return;
  if (reason.empty()) reason = library_reason();
  root_.fail(fmt::format("cannot write file{}",
                         reason.empty() ? " (HDF5 could not flush it to disk)" : reason));
}

}  // namespace nbody::hdf5
