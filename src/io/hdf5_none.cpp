// Without HDF5 (libhdf5-dev not found at configure time): snapshot and checkpoint files
// are refused with a message saying how to get them; everything else works.
#include <fmt/format.h>

#include "nbody/error.hpp"
#include "nbody/snapshot.hpp"
#include "nbody/snapshot_parameters.hpp"

namespace nbody {

namespace {
[[noreturn]] void refuse(const std::filesystem::path& path) {
  throw Error(fmt::format("{}: nbody was built without HDF5 (install libhdf5-dev and rebuild)",
                          path.string()));
}
}  // namespace

bool have_hdf5() {
  return false;
}

void write_snapshot(const std::filesystem::path& path, const ParticleSystem& /*ps*/,
                    const SnapshotOptions& /*options*/, const std::vector<double>* /*potential*/) {
  refuse(path);
}

ParticleSystem read_snapshot(const std::filesystem::path& path) {
  refuse(path);
}

ParticleSystem read_snapshot_share(const std::filesystem::path& path, ForceReducer& /*group*/,
                                   std::size_t& /*total*/) {
  refuse(path);
}

void write_snapshot_share(const std::filesystem::path& path, const ParticleSystem& /*ps*/,
                          const SnapshotOptions& /*options*/,
                          const std::vector<double>* /*potential*/, ForceReducer& /*group*/) {
  refuse(path);
}

void write_checkpoint(const std::filesystem::path& path, const CheckpointState& /*state*/) {
  refuse(path);
}

void write_checkpoint(const std::filesystem::path& path, const CheckpointState& /*state*/,
                      const ParticleSystem& /*particles*/, std::optional<bool>* /*ids_usable*/) {
  refuse(path);
}

void write_checkpoint_share(const std::filesystem::path& path, const CheckpointState& /*state*/,
                            const ParticleSystem& /*particles*/, ForceReducer& /*group*/,
                            std::optional<bool>* /*ids_usable*/) {
  refuse(path);
}

CheckpointState read_checkpoint(const std::filesystem::path& path) {
  refuse(path);
}

CheckpointState read_checkpoint_share(const std::filesystem::path& path, ForceReducer& /*group*/,
                                      std::size_t& /*total*/) {
  refuse(path);
}

CheckpointState read_checkpoint_header(const std::filesystem::path& path) {
  refuse(path);
}

std::vector<SnapshotParameter> read_snapshot_parameters(
    const std::filesystem::path& path, const std::vector<SnapshotParameter>& /*wanted*/) {
  refuse(path);
}

}  // namespace nbody
