// Checkpoints: the exact state of a run (float64 arrays, the scalars as attributes) under
// /Checkpoint, so a run continues bit for bit. The same file is also a snapshot (/Header
// and /PartType1, sharing the mass, radius and id datasets through hard links), so
// `-i checkpoint.h5`, yt and pynbody read it as they read any snapshot.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <cmath>
#include <initializer_list>
#include <string>
#include <unordered_map>

#include "io/hdf5_detail.hpp"
#include "io/hdf5_file.hpp"
#include "io/snapshot_layout.hpp"
#include "nbody/error.hpp"
#include "nbody/snapshot.hpp"

namespace nbody {

namespace fs = std::filesystem;

namespace {

constexpr std::int32_t kFormatVersion = 1;
constexpr const char* kGroup = "Checkpoint";

/// The float64 arrays of a ParticleSystem and their dataset names under /Checkpoint.
struct ArrayField {
  const char* name;
  std::vector<double> ParticleSystem::*member;
};
constexpr std::array<ArrayField, 11> kArrays{{{"x", &ParticleSystem::x},
                                              {"y", &ParticleSystem::y},
                                              {"z", &ParticleSystem::z},
                                              {"vx", &ParticleSystem::vx},
                                              {"vy", &ParticleSystem::vy},
                                              {"vz", &ParticleSystem::vz},
                                              {"ax", &ParticleSystem::ax},
                                              {"ay", &ParticleSystem::ay},
                                              {"az", &ParticleSystem::az},
                                              {"mass", &ParticleSystem::mass},
                                              {"radius", &ParticleSystem::radius}}};

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

void write_state_attributes(hdf5::Group& group, const CheckpointState& state) {
  const ParticleSystem& ps = state.particles;
  group.write_attribute("format", std::string("nbody checkpoint"));
  group.write_attribute("format_version", kFormatVersion);
  group.write_attribute("dim", std::int32_t{ps.dim});
  group.write_attribute("time", ps.time);
  group.write_attribute("step", state.step);
  group.write_attribute("accelerations_valid", std::int32_t{ps.accelerations_valid() ? 1 : 0});
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
}

/// /Header and /PartType1 for snapshot readers. Only positions and velocities are
/// stored twice (GADGET wants N x 3 rows, the checkpoint keeps separate x, y, z arrays).
void write_snapshot_view(hdf5::Group& root, const ParticleSystem& ps) {
  using namespace snapshot_layout;
  const std::string arrays = std::string("/") + kGroup + "/";
  write_header(root, ps.size(), ps.time, ps.dim, hdf5::Precision::Double);
  hdf5::Group bodies = root.create_group(kBodyGroup);
  bodies.write_rows("Coordinates", ps.x, ps.y, ps.z, hdf5::Precision::Double);
  bodies.write_rows("Velocities", ps.vx, ps.vy, ps.vz, hdf5::Precision::Double);
  bodies.link("Masses", arrays + "mass");
  if (ps.has_radii()) bodies.link("Radii", arrays + "radius");
  if (ids_usable(ps.id)) {
    bodies.link("ParticleIDs", arrays + "id");
  } else {
    bodies.write_ids("ParticleIDs", snapshot_ids(ps));
  }
}

/// A scalar attribute that must be one of a few integers (dim, flags, version).
int read_choice(const hdf5::Group& group, const std::string& name,
                std::initializer_list<int> allowed) {
  const double value = group.read_attribute_double(name);
  for (int a : allowed) {
    if (value == a) return a;
  }
  group.refuse(group.where(name), fmt::format("must be one of {}", fmt::join(allowed, ", ")),
               value);
}

/// What a saved number may be. A checkpoint edited (or damaged) to hold a NaN position or a
/// mass of 0 would otherwise run on and write files that `nbody info` then refuses.
/// ValueRule's three rules, plus one for values a run may leave uncomputed.
enum class Range {
  Finite = static_cast<int>(ValueRule::Finite),
  NonNegative = static_cast<int>(ValueRule::NonNegative),
  Positive = static_cast<int>(ValueRule::Positive),
  FiniteOrNaN
};

void check_value(const hdf5::Group& group, const std::string& where, double v, Range range) {
  if (range == Range::FiniteOrNaN) {  // NaN: not computed (a run without energies)
    if (std::isinf(v)) group.refuse(where, "must be finite (or nan: not computed)", v);
    return;
  }
  const auto rule = static_cast<ValueRule>(range);
  if (!obeys(v, rule)) group.refuse(where, rule_text(rule), v);
}

/// Whether v passes, without building a message (the loop over every body).
bool passes(double v, Range range) {
  return range == Range::FiniteOrNaN ? !std::isinf(v) : obeys(v, static_cast<ValueRule>(range));
}

double read_scalar(const hdf5::Group& group, const std::string& name, Range range) {
  const double v = group.read_attribute_double(name);
  check_value(group, group.where(name), v, range);
  return v;
}

void check_array(const hdf5::Group& group, const std::string& name, const std::vector<double>& v,
                 Range range) {
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!passes(v[i], range))
      check_value(group, fmt::format("{}[{}]", group.where(name), i), v[i], range);
  }
}

/// The range of each saved array: accelerations only matter when they are valid.
Range range_of(const std::string& name) {
  if (name == "mass") return Range::Positive;
  if (name == "radius") return Range::NonNegative;
  return Range::Finite;
}

/// Ids other than 0 (no id) are unique: collisions and outputs find bodies by id.
void check_ids(const hdf5::Group& group, const std::vector<std::uint64_t>& ids) {
  std::unordered_map<std::uint64_t, std::size_t> first_use;
  first_use.reserve(ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] == 0) continue;
    const auto [it, inserted] = first_use.emplace(ids[i], i);
    if (!inserted) {
      group.refuse(fmt::format("{}[{}]", group.where("id"), i),
                   fmt::format("is used twice (also by body {})", it->second), ids[i]);
    }
  }
}

}  // namespace

void write_checkpoint(const fs::path& path, const CheckpointState& state) {
  check_sizes(path, state.particles);
  write_path_atomically(path, [&](const fs::path& tmp) {
    hdf5::File file = hdf5::File::create(tmp, path.string());
    {
      hdf5::Group group = file.root().create_group(kGroup);
      write_state_attributes(group, state);
      // float64 on disk and in memory: no conversion, so every bit survives.
      for (const ArrayField& a : kArrays) {
        group.write_values(a.name, state.particles.*a.member, hdf5::Precision::Double);
      }
      group.write_ids("id", state.particles.id);
      if (!state.integrator.values.empty()) {
        group.write_attribute("integrator_next_dt", state.integrator.next_dt);
        group.write_values("integrator_state", state.integrator.values, hdf5::Precision::Double);
      }
      write_snapshot_view(file.root(), state.particles);
    }
    file.close();
  });
}

CheckpointState read_checkpoint(const fs::path& path) {
  const hdf5::File file = hdf5::File::open(path);
  const hdf5::Group& root = file.root();
  if (!root.has(kGroup)) {
    root.fail("/Checkpoint is missing (not an nbody checkpoint; a snapshot is read with -i)");
  }
  const hdf5::Group group = root.open_group(kGroup);
  if (const std::string format = group.read_attribute_string("format");
      format != "nbody checkpoint") {
    group.refuse(group.where("format"), "must be \"nbody checkpoint\"", format);
  }
  const double version = group.read_attribute_double("format_version");
  if (version != kFormatVersion) {
    group.fail(fmt::format("{} is {}; this nbody reads version {}", group.where("format_version"),
                           printable(version), kFormatVersion));
  }

  CheckpointState state;
  ParticleSystem& ps = state.particles;
  const hdf5::Shape shape = group.dataset_shape("x");
  if (shape.size() != 1) group.fail(fmt::format("{} is not 1-D", group.where("x")));
  const std::size_t n = shape[0];
  if (n == 0) group.refuse(group.where("x"), "the checkpoint holds no bodies", n);
  // Before anything is allocated: 13 arrays of n values, and each one read.
  hdf5::detail::check_memory(group.where("x"), n, 14 * 8, group);
  ps.resize(n);
  for (const ArrayField& a : kArrays) {
    const hdf5::Shape s = group.dataset_shape(a.name);
    if (s.size() != 1 || s[0] != n) {
      group.fail(fmt::format("{} has shape ({}), {} has {} values", group.where(a.name),
                             fmt::join(s, ", "), group.where("x"), n));
    }
    ps.*a.member = group.read_doubles(a.name);
  }
  for (const ArrayField& a : kArrays) {
    const std::string name = a.name;
    if (name == "ax" || name == "ay" || name == "az") continue;  // checked below, when valid
    check_array(group, a.name, ps.*a.member, range_of(a.name));
  }
  const hdf5::Shape id_shape = group.dataset_shape("id");
  if (id_shape.size() != 1 || id_shape[0] != n) {
    group.fail(fmt::format("{} has shape ({}), {} has {} values", group.where("id"),
                           fmt::join(id_shape, ", "), group.where("x"), n));
  }
  ps.id = group.read_ids("id");
  check_ids(group, ps.id);

  ps.dim = read_choice(group, "dim", {2, 3});
  if (ps.dim == 2) {  // planar runs hold z = vz = 0 exactly
    for (const char* name : {"z", "vz"}) {
      const std::vector<double>& v = name[0] == 'z' ? ps.z : ps.vz;
      for (std::size_t i = 0; i < n; ++i) {
        if (v[i] != 0) {
          group.refuse(fmt::format("{}[{}]", group.where(name), i),
                       "must be 0 in a planar (dim 2) checkpoint", v[i]);
        }
      }
    }
  }
  ps.time = read_scalar(group, "time", Range::Finite);
  if (read_choice(group, "accelerations_valid", {0, 1}) == 1) {
    check_array(group, "ax", ps.ax, Range::Finite);
    check_array(group, "ay", ps.ay, Range::Finite);
    check_array(group, "az", ps.az, Range::Finite);
    ps.set_accelerations_valid();
  }
  state.step = group.read_attribute_count("step");
  state.initial_energy = read_scalar(group, "initial_energy", Range::FiniteOrNaN);
  state.next_snapshot = group.read_attribute_count("next_snapshot");
  state.next_snapshot_time = read_scalar(group, "next_snapshot_time", Range::Finite);
  if (group.has_attribute("snapshot_origin"))  // written since IAS15 (older: NaN, unknown)
    state.snapshot_origin = read_scalar(group, "snapshot_origin", Range::FiniteOrNaN);
  CollisionTotals& c = state.collisions;
  c.stages = group.read_attribute_count("collision_stages");
  c.contacts = group.read_attribute_count("collision_contacts");
  c.merges = group.read_attribute_count("collision_merges");
  c.max_overlap_last = read_scalar(group, "collision_max_overlap_last", Range::NonNegative);
  c.energy_lost = read_scalar(group, "collision_energy_lost", Range::Finite);
  c.seconds = read_scalar(group, "collision_seconds", Range::NonNegative);
  state.parameters = group.read_attribute_string("parameters");
  if (group.has("integrator_state")) {  // IAS15: b, e (7 x 3N each), csx, csv (3N each)
    const hdf5::Shape s = group.dataset_shape("integrator_state");
    if (s.size() != 1 || s[0] != 48 * n) {
      group.fail(fmt::format("{} has shape ({}), IAS15's state for {} bodies has {} values",
                             group.where("integrator_state"), fmt::join(s, ", "), n, 48 * n));
    }
    state.integrator.values = group.read_doubles("integrator_state");
    check_array(group, "integrator_state", state.integrator.values, Range::Finite);
    state.integrator.next_dt = read_scalar(group, "integrator_next_dt", Range::Positive);
  }
  return state;
}

}  // namespace nbody
