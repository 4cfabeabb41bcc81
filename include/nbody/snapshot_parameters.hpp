#pragma once
// The run options in a snapshot, as GADGET-4 keeps its parameter file in /Parameters: one
// attribute per option (numbers as float64, names as strings), so that a snapshot read
// back continues with the options it was written with (Python's nbody.load) and tools
// that show /Parameters (yt's ds.parameters, h5py) can tell how the run was made.
#include <filesystem>
#include <string>
#include <variant>
#include <vector>

namespace nbody {

struct SnapshotParameter {
  std::string name;
  std::variant<double, std::string> value;
};

/// The parameters of `wanted` that the snapshot's /Parameters group holds, with their
/// values, in the order of `wanted`; the type of each wanted value says how to read it
/// (a number or a string). A snapshot without /Parameters (another code's, an older
/// nbody's) gives none. Throws nbody::Error naming the file and attribute when one is
/// there with the wrong type; without HDF5, nbody::Error saying so.
[[nodiscard]] std::vector<SnapshotParameter> read_snapshot_parameters(
    const std::filesystem::path& path, const std::vector<SnapshotParameter>& wanted);

}  // namespace nbody
