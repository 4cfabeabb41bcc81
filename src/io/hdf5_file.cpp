// The HDF5 wrappers of hdf5_file.hpp: handles, files and groups. Datasets are in
// hdf5_datasets.cpp, attributes in hdf5_attributes.cpp. Files use the library's default
// (oldest) format version, so any HDF5 1.8+ reader (h5py, yt, pynbody, GADGET, SWIFT tools)
// opens them.
#include "io/hdf5_file.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <mutex>

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
  return shape;
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
