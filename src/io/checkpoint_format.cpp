// Checkpoints: the exact state of a run (float64 arrays, the scalars as attributes), so a
// run continues bit for bit. The file is also a snapshot (/Header and /PartType1): the
// positions and velocities are the view's Coordinates and Velocities, the other arrays are
// under /Checkpoint, and the view's mass, radius and id datasets are hard links to them
// (checkpoint_layout.hpp), so `-i checkpoint.h5`, yt and pynbody read it as any snapshot. Written
// by one process, or in a decomposed run by every rank at once, each its own rows (the bodies in
// the ranks' order, not by id); read in checkpoint_read.cpp.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "io/checkpoint_layout.hpp"
#include "io/hdf5_file.hpp"
#include "io/io_trace.hpp"
#include "io/share_checks.hpp"
#include "io/snapshot_layout.hpp"
#include "io/written_together.hpp"
#include "nbody/distributed.hpp"
#include "nbody/error.hpp"
#include "nbody/snapshot.hpp"

namespace nbody {

namespace fs = std::filesystem;

namespace {

using namespace checkpoint_layout;

void check_sizes(const fs::path& path, const ParticleSystem& ps) {
  for (const ArrayField& a : kArrays) {
    if ((ps.*a.member).size() != ps.size()) {
      throw Error(fmt::format("{}: cannot write checkpoint ({} has {} values for {} bodies)",
                              path.string(), a.name, (ps.*a.member).size(), ps.size()));
    }
  }
  if (ps.id.size() != ps.size()) {
    throw Error(fmt::format("{}: cannot write checkpoint (id has {} values for {} bodies)",
                            path.string(), ps.id.size(), ps.size()));
  }
}

/// `accelerations_valid`: on every rank's bodies.
void write_state_attributes(hdf5::Group& group, const CheckpointState& state,
                            const ParticleSystem& ps, bool accelerations_valid) {
  group.write_attribute("format", std::string("nbody checkpoint"));
  group.write_attribute("format_version", kFormatVersion);
  group.write_attribute("dim", std::int32_t{ps.dim});
  group.write_attribute("time", ps.time);
  group.write_attribute("step", state.step);
  group.write_attribute("accelerations_valid", std::int32_t{accelerations_valid ? 1 : 0});
  group.write_attribute("initial_energy", state.initial_energy);
  group.write_attribute("next_snapshot", state.next_snapshot);
  group.write_attribute("next_snapshot_time", state.next_snapshot_time);
  group.write_attribute("snapshot_origin", state.snapshot_origin);
  const CollisionTotals& c = state.collisions;
  group.write_attribute("collision_stages", c.stages);
  group.write_attribute("collision_contacts", c.contacts);
  group.write_attribute("collision_merges", c.merges);
  group.write_attribute("collision_max_overlap_last", c.max_overlap_last);
  group.write_attribute("collision_energy_lost", c.energy_lost);
  group.write_attribute("collision_seconds", c.seconds);
  group.write_attribute("parameters", state.parameters);
  group.write_attribute(kTestParticleType, std::int32_t{ps.test_particle_type});
  if (ps.has_test_particles()) group.write_attribute(kNumActive, std::uint64_t{ps.n_active});
}

/// What the snapshot view's layout takes from every rank's bodies.
struct ViewChoices {
  bool radii = false;       // Radii (a link to /Checkpoint/radius): some body has a radius
  bool ids_usable = false;  // ParticleIDs a link to /Checkpoint/id, else 1..N by row
};

/// Collective with a group: the choices over every rank's bodies.
ViewChoices view_choices(const ParticleSystem& ps, ForceReducer* group,
                         std::optional<bool>* ids_usable) {
  const bool radii = group ? group->max(ps.has_radii() ? 1 : 0) != 0 : ps.has_radii();
  return {radii, snapshot_layout::ids_usable_over(ps.id, group, ids_usable)};
}

/// /Header and /PartType1 for snapshot readers, at their full size `total`: the positions
/// and velocities (the checkpoint's own, N x 3 as GADGET has them), links to the rest.
void lay_out_snapshot_view(hdf5::Group& root, std::uint64_t total, const ParticleSystem& ps,
                           ViewChoices view) {
  using namespace snapshot_layout;
  const std::string arrays = std::string("/") + kGroup + "/";
  write_header(root, total, ps.time, ps.dim, hdf5::Precision::Double);
  hdf5::Group bodies = root.create_group(kBodyGroup);
  bodies.create_values("Coordinates", total, 3, hdf5::Precision::Double);
  bodies.create_values("Velocities", total, 3, hdf5::Precision::Double);
  bodies.link("Masses", arrays + "mass");
  if (view.radii) bodies.link("Radii", arrays + "radius");
  if (view.ids_usable) {
    bodies.link("ParticleIDs", arrays + "id");
  } else {
    bodies.create_ids("ParticleIDs", total);
  }
}

/// This rank's rows of the checkpoint and of its snapshot view, from row `offset`.
void write_rows(hdf5::File& file, std::uint64_t offset, const ParticleSystem& ps,
                ViewChoices view) {
  hdf5::Group group = file.root().open_group(kGroup);
  // float64 on disk and in memory: no conversion, so every bit survives.
  for (std::size_t k = kViewed; k < kArrays.size(); ++k) {
    if (kArrays[k].member == &ParticleSystem::radius && !view.radii) continue;
    group.write_values_at(kArrays[k].name, offset, ps.*kArrays[k].member, hdf5::Precision::Double);
  }
  group.write_ids_at("id", offset, ps.id);
  hdf5::Group bodies = file.root().open_group(snapshot_layout::kBodyGroup);
  bodies.write_rows_at("Coordinates", offset, ps.x, ps.y, ps.z, hdf5::Precision::Double);
  bodies.write_rows_at("Velocities", offset, ps.vx, ps.vy, ps.vz, hdf5::Precision::Double);
  if (!view.ids_usable) {  // numbered by row over the file, as one process numbers them
    std::vector<std::uint64_t> ids(ps.size());
    for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = offset + i + 1;
    bodies.write_ids_at("ParticleIDs", offset, ids);
  }
}

/// write_checkpoint's work, with the bodies `ps` (with a group, this rank's).
void write_checkpoint_rows(const fs::path& path, const CheckpointState& state,
                           const ParticleSystem& ps, ForceReducer* group,
                           std::optional<bool>* ids_usable = nullptr) {
  std::string problem;
  try {
    check_sizes(path, ps);
    // IAS15 runs as one process (docs/distributed.md): its state is never in shares.
    if (group && !state.integrator.values.empty())
      throw Error(fmt::format(
          "{}: cannot write checkpoint (IAS15's state is written by one process, not in shares)",
          path.string()));
  } catch (const Error& e) {
    if (!group) throw;
    problem = e.what();
  }
  if (group) io_detail::throw_what_any_found(*group, problem);
  if (group && group->max(ps.has_test_particles() ? 1 : 0) != 0)
    throw Error(fmt::format(
        "{}: cannot write checkpoint (test particles: written by one process (the decomposed "
        "write does not take them yet))",
        path.string()));
  io_detail::IoTrace trace(
      fmt::format("rank {} {} checks", group ? group->part() : 0, path.filename().string()));
  const ViewChoices view = view_choices(ps, group, ids_usable);
  trace.mark("ids");
  // A decomposed CPU run's ownership (every rank has its cuts, or none is written): the rows
  // each rank writes, the cuts, the bodies' costs, for a restart on as many ranks.
  const DecompositionState& domain = state.decomposition;
  const bool owned =
      group && group->max(domain.cuts.empty() || domain.cost.size() != ps.size() ? 1 : 0) == 0;
  // Every decomposed run's: a restart on as many ranks reads its own bodies, with no first
  // migration.
  const std::vector<std::uint64_t> rank_rows =
      group ? io_detail::every_rank_count(*group, ps.size()) : std::vector<std::uint64_t>{};
  const bool valid =
      group ? group->max(ps.accelerations_valid() ? 0 : 1) == 0 : ps.accelerations_valid();
  io_detail::write_together(
      path, group, ps.size(),
      [&](hdf5::File& file, std::uint64_t total) {
        {
          hdf5::Group checkpoint = file.root().create_group(kGroup);
          write_state_attributes(checkpoint, state, ps, valid);
          for (std::size_t k = kViewed; k < kArrays.size(); ++k) {
            if (kArrays[k].member == &ParticleSystem::radius && !view.radii) continue;
            checkpoint.create_values(kArrays[k].name, total, 1, hdf5::Precision::Double);
          }
          checkpoint.create_ids("id", total);
          if (group) checkpoint.write_ids(kRankRows, rank_rows);
          if (owned) {
            checkpoint.create_values(kDomainCost, total, 1, hdf5::Precision::Double);
            checkpoint.write_ids(kDomainCuts, domain.cuts);
            checkpoint.write_attribute(kDomainCutLevel, std::uint64_t(domain.cut_level));
          }
          if (!state.integrator.values.empty()) {
            checkpoint.write_attribute("integrator_next_dt", state.integrator.next_dt);
            checkpoint.write_values("integrator_state", state.integrator.values,
                                    hdf5::Precision::Double);
          }
        }
        lay_out_snapshot_view(file.root(), total, ps, view);
      },
      [&](hdf5::File& file, std::uint64_t offset) {
        write_rows(file, offset, ps, view);
        if (owned)
          file.root().open_group(kGroup).write_values_at(kDomainCost, offset, domain.cost,
                                                         hdf5::Precision::Double);
      });
}

}  // namespace

void write_checkpoint(const fs::path& path, const CheckpointState& state) {
  write_checkpoint_rows(path, state, state.particles, nullptr);
}

void write_checkpoint(const fs::path& path, const CheckpointState& state,
                      const ParticleSystem& particles, std::optional<bool>* ids_usable) {
  write_checkpoint_rows(path, state, particles, nullptr, ids_usable);
}

void write_checkpoint_share(const fs::path& path, const CheckpointState& state,
                            const ParticleSystem& particles, ForceReducer& group,
                            std::optional<bool>* ids_usable) {
  write_checkpoint_rows(path, state, particles, &group, ids_usable);
}

}  // namespace nbody
