#pragma once
// Internal to the HDF5 wrappers (hdf5_file.cpp, hdf5_datasets.cpp, hdf5_attributes.cpp): the
// few helpers they share. Defined in hdf5_file.cpp.
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

}  // namespace nbody::hdf5::detail
