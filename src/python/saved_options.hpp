#pragma once
// The run options of a Python simulation as files keep them, so that what is saved and
// loaded back (or checkpointed and restarted) continues with the same physics:
//  - HDF5 snapshots: one /Parameters attribute per option, under its Python name
//    (GADGET-4 keeps its parameters there too; yt shows them as ds.parameters);
//  - checkpoints: the `key = value` lines of `nbody run`'s used_parameters.toml, under
//    the command line's names, which `nbody run --restart` reads as well.
// Text and CSV files hold bodies only.
#include <string>
#include <vector>

#include "nbody/snapshot_parameters.hpp"
#include "python/run_options.hpp"

namespace nbody::python {

/// Every option with its value (numbers and flags as float64, names as strings).
[[nodiscard]] std::vector<SnapshotParameter> snapshot_parameters(const RunOptions& options);
/// The names and types read_snapshot_parameters() looks for.
[[nodiscard]] std::vector<SnapshotParameter> wanted_parameters();
/// Sets the options found (a file's value of the wrong kind raises nbody.Error naming it).
void apply_parameters(RunOptions& options, const std::vector<SnapshotParameter>& found,
                      const std::string& file);

/// The options as TOML `key = value` lines under the command line's names.
[[nodiscard]] std::string parameters_toml(const RunOptions& options);
/// Sets the run options named in such lines (other keys, comments and blank lines are
/// skipped: a CLI checkpoint also records its input file, outputs, ...).
void apply_parameters_toml(RunOptions& options, const std::string& toml, const std::string& file);

}  // namespace nbody::python
