// /Parameters of a snapshot: written by write_snapshot (SnapshotOptions::parameters),
// read back by read_snapshot_parameters (nbody/snapshot_parameters.hpp).
#include "nbody/snapshot_parameters.hpp"

#include <fmt/format.h>

#include "io/snapshot_parameters_hdf5.hpp"
#include "nbody/error.hpp"

namespace nbody {

namespace snapshot_layout {

void write_parameters(hdf5::Group& root, const std::vector<SnapshotParameter>& parameters) {
  hdf5::Group group = root.create_group("Parameters");
  for (const SnapshotParameter& p : parameters) {
    if (const double* number = std::get_if<double>(&p.value)) {
      group.write_attribute(p.name, *number);
    } else {
      group.write_attribute(p.name, std::get<std::string>(p.value));
    }
  }
}

}  // namespace snapshot_layout

std::vector<SnapshotParameter> read_snapshot_parameters(
    const std::filesystem::path& path, const std::vector<SnapshotParameter>& wanted) {
  hdf5::silence_library_errors();
  const hdf5::File file = hdf5::File::open(path);
  std::vector<SnapshotParameter> found;
  if (!file.root().has("Parameters")) return found;
  const hdf5::Group group = file.root().open_group("Parameters");
  for (const SnapshotParameter& w : wanted) {
    if (!group.has_attribute(w.name)) continue;
    if (std::holds_alternative<double>(w.value)) {
      found.push_back({w.name, group.read_attribute_double(w.name)});
    } else {
      found.push_back({w.name, group.read_attribute_string(w.name)});
    }
  }
  return found;
}

}  // namespace nbody
