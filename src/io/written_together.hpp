#pragma once
// One HDF5 file written by every rank of a decomposed run, each its own rows, all at once:
// rank 0 lays it out, then every rank writes its rows straight to their bytes (the HDF5 here
// is serial, one metadata writer; docs/snapshots.md "Large files"); replaced atomically. Or
// by one process, the same way.
#include <cstdint>
#include <filesystem>
#include <functional>

#include "io/hdf5_file.hpp"
#include "nbody/distributed.hpp"

namespace nbody::io_detail {

/// Writes the file `path` atomically from every rank of `group` (null: this process alone,
/// whose rows are all of them). This rank holds `count` rows; the file holds the sum over the
/// ranks, rank 0's first, then rank 1's, ... `layout(file, total)` (on rank 0) makes the
/// groups, attributes and datasets at their full size (create_values, create_ids, or
/// written whole); `rows(file, offset)` writes this rank's rows from `offset` (the rows of
/// the ranks before it) into those datasets, with write_*_at only. Rank 0 creates a
/// temporary beside `path`, lays it out and closes it; then every rank opens it for its rows
/// (File::open_rows) and writes them, at once; once every rank has written, rank 0 renames it
/// over `path`. Collective: what any rank found (its rows, the rename) every rank throws, and
/// then the temporary is gone and `path` as it was.
void write_together(const std::filesystem::path& path, ForceReducer* group, std::uint64_t count,
                    const std::function<void(hdf5::File&, std::uint64_t total)>& layout,
                    const std::function<void(hdf5::File&, std::uint64_t offset)>& rows);

}  // namespace nbody::io_detail
