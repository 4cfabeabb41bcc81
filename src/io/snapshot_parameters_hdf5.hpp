#pragma once
// Internal to src/io: the writer of a snapshot's /Parameters group (snapshot_parameters.cpp),
// called by write_snapshot when SnapshotOptions::parameters is set.
#include <vector>

#include "io/hdf5_file.hpp"
#include "nbody/snapshot_parameters.hpp"

namespace nbody::snapshot_layout {

void write_parameters(hdf5::Group& root, const std::vector<SnapshotParameter>& parameters);

}  // namespace nbody::snapshot_layout
