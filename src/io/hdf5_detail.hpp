#pragma once
// Internal to the HDF5 wrappers (hdf5_file.cpp, hdf5_datasets.cpp, hdf5_attributes.cpp): the
// few helpers they share. Defined in hdf5_file.cpp.
#include <cstdint>
#include <string>

#include "io/hdf5_file.hpp"

namespace nbody::hdf5::detail {

inline constexpr const char* kCorrupt = "(truncated or corrupt?)";

/// The number of elements of a shape (1 for a scalar).
hsize_t element_count(const Shape& shape);

/// The extent of a dataspace; `what` and `group` name the object in a failure's message.
Shape extent_of(const std::string& what, hid_t space, const Group& group);

/// Creation properties without HDF5's default object timestamps: the same state gives
/// the same bytes, so a restarted run's files compare equal to an uninterrupted run's.
Handle untimed(hid_t property_class);

/// The system's reason for the library's last failure ("File too large", "No space left on
/// device"), as " (reason)", from the current error stack; empty when it names none. Call it
/// right after the failing call: the next library call clears the stack.
std::string library_reason();

/// Throws (naming `what` in `group`'s file) unless `type` is a number we can read exactly: a
/// standard 8- to 64-bit integer or, with `allow_float`, an IEEE float32/float64 (either byte
/// order). A corrupt datatype would otherwise be "converted" into zeros or garbage.
void check_number_type(hid_t type, const std::string& what, const Group& group, bool allow_float);

/// Throws "WHAT: COUNT values need N bytes of memory, more than this machine has" before
/// anything is allocated, when count * bytes_each exceeds the physical memory.
void check_memory(const std::string& what, std::uint64_t count, std::uint64_t bytes_each,
                  const Group& group);

/// Checks, in the file's own bytes, the version-1 object header at `address` (relative to
/// the superblock) before libhdf5 decodes it: see hdf5_headers.cpp for why.
void check_header(hid_t file, const std::string& path, haddr_t address, const std::string& what,
                  const Group& group);

/// Before H5Fopen: a version-0 or -1 superblock's driver information block lies inside the
/// file (libhdf5 1.10 allocates what it claims first). Throws nbody::Error naming the file.
void check_superblock_bytes(const std::string& path);

/// Checks the superblock's status flags (version 0 and 1 superblocks carry no checksum).
void check_superblock(hid_t file, const std::string& path, const Group& group);

}  // namespace nbody::hdf5::detail
