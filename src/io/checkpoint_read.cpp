// Reading checkpoints (checkpoint_format.cpp writes them): whole (read_checkpoint), this
// rank's rows alone (read_checkpoint_share: HDF5 row selections, no rank holds all N), or
// the attributes alone (read_checkpoint_header), through one path: the whole file is the one
// share of one process. Every value is checked as it enters, and a problem in any share is
// the whole file's reader's message (the row over the file), thrown by every rank.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>

#include "io/checkpoint_layout.hpp"
#include "io/hdf5_detail.hpp"
#include "io/hdf5_file.hpp"
#include "io/share_checks.hpp"
#include "io/snapshot_layout.hpp"
#include "nbody/distributed.hpp"
#include "nbody/error.hpp"
#include "nbody/gravity.hpp"
#include "nbody/snapshot.hpp"

namespace nbody {

namespace fs = std::filesystem;

namespace {

using namespace checkpoint_layout;
using io_detail::Found;

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

/// The message of a value out of its range (an nbody::Error to throw).
Error value_error(const hdf5::Group& group, const std::string& where, double v, Range range) {
  if (range == Range::FiniteOrNaN)  // NaN: not computed (a run without energies)
    return input_error(group.file() + ": " + where, "must be finite (or nan: not computed)", v);
  return input_error(group.file() + ": " + where, rule_text(static_cast<ValueRule>(range)), v);
}

/// Whether v passes, without building a message (the loop over every body).
bool passes(double v, Range range) {
  return range == Range::FiniteOrNaN ? !std::isinf(v) : obeys(v, static_cast<ValueRule>(range));
}

double read_scalar(const hdf5::Group& group, const std::string& name, Range range) {
  const double v = group.read_attribute_double(name);
  if (!passes(v, range)) throw value_error(group, group.where(name), v, range);
  return v;
}

/// Where row `row` of a saved array is: "/Checkpoint/mass[5]", or in version 2 for the
/// positions and velocities "/PartType1/Coordinates[5, 0]".
using RowPlace = std::function<std::string(std::uint64_t row)>;

/// The first value of `v` (rows from `first` over the file) out of its range, as the check
/// `stage` of the whole file's reader; from row `relaxed` on (the test particles' masses),
/// NonNegative for Positive.
std::optional<Found> first_bad(const hdf5::Group& group, const RowPlace& where,
                               const std::vector<double>& v, Range range, std::uint64_t first,
                               std::uint64_t stage, std::uint64_t relaxed = ~std::uint64_t{0}) {
  for (std::size_t i = 0; i < v.size(); ++i) {
    const Range r = first + i >= relaxed && range == Range::Positive ? Range::NonNegative : range;
    if (!passes(v[i], r))
      return Found{stage, first + i, value_error(group, where(first + i), v[i], r).what()};
  }
  return std::nullopt;
}

/// group.where(name)[row].
RowPlace place_in(const hdf5::Group& group, const std::string& name) {
  return
      [&group, name](std::uint64_t row) { return fmt::format("{}[{}]", group.where(name), row); };
}

/// The range of each saved array: accelerations only matter when they are valid.
Range range_of(const std::string& name) {
  if (name == "mass") return Range::Positive;
  if (name == "radius") return Range::NonNegative;
  return Range::Finite;
}

/// A dataset of `columns` values per body: shape (n) or (n, columns); `counted` names the
/// dataset that gave n.
void check_shape(const hdf5::Group& group, const std::string& name, std::uint64_t n,
                 const std::string& counted, std::size_t columns = 1) {
  const hdf5::Shape s = group.dataset_shape(name);
  const bool fits =
      columns == 1 ? s.size() == 1 && s[0] == n : s.size() == 2 && s[0] == n && s[1] == columns;
  if (!fits) {
    group.fail(fmt::format("{} has shape ({}), {} has {} values", group.where(name),
                           fmt::join(s, ", "), counted, n));
  }
}

/// The layout's version: 1 (every array under /Checkpoint) or 2 (checkpoint_layout.hpp).
int layout_version(const hdf5::Group& group) {
  const double version = group.read_attribute_double("format_version");
  if (version != 1 && version != kFormatVersion) {
    group.fail(fmt::format("{} is {}; this nbody reads versions 1 and {}",
                           group.where("format_version"), printable(version), kFormatVersion));
  }
  return int(version);
}

/// Which rows a read takes: every body's (group null, bodies), this rank's share of them
/// (a group), or none (the attributes alone).
struct Reading {
  ForceReducer* group = nullptr;
  bool bodies = true;
};

/// A decomposed run's record of its ranks (write_checkpoint_share): the rows each rank wrote
/// when it is there for `parts` ranks (empty otherwise, or without it), checked to sum to n.
std::vector<std::uint64_t> rows_by_rank(const hdf5::Group& group, std::size_t n, int parts) {
  if (!group.has(kRankRows)) return {};
  const std::vector<std::uint64_t> rows = group.read_ids(kRankRows);
  std::uint64_t sum = 0;
  for (const std::uint64_t r : rows) sum += r;
  if (sum != n)
    group.fail(fmt::format("{} does not add up to the {} bodies", group.where(kRankRows), n));
  return rows.size() == std::size_t(parts) ? rows : std::vector<std::uint64_t>{};
}

/// The cuts of the key line a decomposed CPU run kept (parts + 1 keys from 0 to the end,
/// non-decreasing, and their level; a malformed record is refused), or none.
void read_cuts(const hdf5::Group& group, std::size_t parts, DecompositionState& out) {
  if (!group.has(kDomainCuts) || !group.has_attribute(kDomainCutLevel)) return;
  const std::vector<std::uint64_t> cuts = group.read_ids(kDomainCuts);
  const std::uint64_t level = group.read_attribute_count(kDomainCutLevel);
  if (cuts.size() != parts + 1 || !std::is_sorted(cuts.begin(), cuts.end()) || cuts.front() != 0 ||
      cuts.back() != ~std::uint64_t(0) || level > 31)
    group.fail(fmt::format("{} are not the cuts of {} ranks", group.where(kDomainCuts), parts));
  out.cuts = cuts;
  out.cut_level = int(level);
}

/// The bodies' rows and every check that needs only this rank's rows (a shape, a read);
/// `mine` gets the rows read. `view`: version 2's /PartType1 (null: version 1).
CheckpointState read_rows(const hdf5::Group& group, const hdf5::Group* view, Reading how,
                          std::size_t& total, ShareRange& mine) {
  CheckpointState state;
  ParticleSystem& ps = state.particles;
  // The count of bodies: version 1's x, version 2's mass (the positions are the view's).
  const std::string counted = view ? "mass" : "x";
  const hdf5::Shape shape = group.dataset_shape(counted);
  if (shape.size() != 1) group.fail(fmt::format("{} is not 1-D", group.where(counted)));
  const std::size_t n = shape[0];
  if (n == 0) group.refuse(group.where(counted), "the checkpoint holds no bodies", n);
  total = n;
  mine = !how.bodies ? ShareRange{0, 0}
         : how.group ? share_range(n, how.group->part(), how.group->parts())
                     : ShareRange{0, n};
  // A decomposed run's checkpoint read by as many ranks as wrote it: each takes the rows it
  // wrote (its bodies: no first migration), and on CPU ranks the cuts, so the run goes on as
  // it would have (write_checkpoint_share).
  const std::vector<std::uint64_t> written = how.bodies && how.group
                                                 ? rows_by_rank(group, n, how.group->parts())
                                                 : std::vector<std::uint64_t>{};
  if (!written.empty()) {
    const auto part = std::size_t(how.group->part());
    mine.first = 0;
    for (std::size_t r = 0; r < part; ++r) mine.first += written[r];
    mine.last = mine.first + written[part];
    read_cuts(group, written.size(), state.decomposition);
  }
  const std::uint64_t rows = mine.last - mine.first;
  // Before anything is allocated: 13 arrays of the rows, and each one read.
  hdf5::detail::check_memory(group.where("x"), rows, 14 * 8, group);
  ps.resize_for_overwrite(rows);  // room for a share that grows as the run goes on
  const std::string count_place = group.where(counted);
  for (std::size_t k = 0; k < kArrays.size(); ++k) {
    const ArrayField& a = kArrays[k];
    if (view && k < kViewed) {  // the view's N x 3 rows, split into three columns
      if (k % 3 != 0) continue;
      const char* name = kViewName[k / 3];
      check_shape(*view, name, n, count_place, 3);
      view->read_rows_into(name, mine.first, ps.*kArrays[k].member, ps.*kArrays[k + 1].member,
                           ps.*kArrays[k + 2].member);
      continue;
    }
    if (view && a.member == &ParticleSystem::radius && !group.has(a.name)) {
      std::fill(ps.radius.begin(), ps.radius.end(), 0.0);  // none written: all 0
      continue;
    }
    check_shape(group, a.name, n, count_place);
    group.read_doubles_into(a.name, mine.first, ps.*a.member);
  }
  check_shape(group, "id", n, count_place);
  ps.id = group.read_ids("id", mine.first, rows);
  if (how.group && group.has(kDomainCost)) {  // the bodies' costs, for the first cut
    check_shape(group, kDomainCost, n, count_place);
    std::vector<double> cost = group.read_doubles(kDomainCost, mine.first, rows, 1);
    for (std::size_t i = 0; i < cost.size(); ++i) {
      if (!(cost[i] > 0) || !std::isfinite(cost[i]))
        group.refuse(fmt::format("{}[{}]", group.where(kDomainCost), mine.first + i),
                     "must be a positive number", cost[i]);
    }
    state.decomposition.cost = std::move(cost);
  }
  if (how.group && group.has("integrator_state")) {
    // IAS15 never runs decomposed (docs/distributed.md): its state is read whole.
    group.fail(fmt::format(
        "{} is IAS15's state, which one process reads whole: a run decomposed over {} ranks "
        "cannot continue it",
        group.where("integrator_state"), how.group->parts()));
  }
  return state;
}

/// read_checkpoint's work for the rows `how` takes. Every rank reads the same attributes
/// (and throws alike for them); what depends on its rows every rank agrees on.
CheckpointState read_checkpoint_rows(const fs::path& path, Reading how, std::size_t& total) {
  ForceReducer* const ranks = how.group;
  std::optional<hdf5::File> file;
  std::optional<hdf5::Group> held, view;
  CheckpointState state;
  ShareRange mine;
  std::string problem;
  try {
    file.emplace(hdf5::File::open(path));
    const hdf5::Group& root = file->root();
    if (!root.has(kGroup)) {
      root.fail("/Checkpoint is missing (not an nbody checkpoint; a snapshot is read with -i)");
    }
    held.emplace(root.open_group(kGroup));
    if (const std::string format = held->read_attribute_string("format");
        format != "nbody checkpoint") {
      held->refuse(held->where("format"), "must be \"nbody checkpoint\"", format);
    }
    if (layout_version(*held) >= 2) {
      if (!root.has(snapshot_layout::kBodyGroup))
        root.fail(
            fmt::format("/{} is missing (a version {} checkpoint's positions and "
                        "velocities are there)",
                        snapshot_layout::kBodyGroup, kFormatVersion));
      view.emplace(root.open_group(snapshot_layout::kBodyGroup));
    }
    state = read_rows(*held, view ? &*view : nullptr, how, total, mine);
  } catch (const Error& e) {
    if (!ranks) throw;
    problem = e.what();
  }
  if (ranks) io_detail::throw_what_any_found(*ranks, problem);
  const hdf5::Group& group = *held;
  ParticleSystem& ps = state.particles;
  const std::uint64_t first = mine.first;
  // Test particles: the bodies from NumActive (absent: none), of TestParticleType (absent: 0).
  const std::uint64_t active =
      group.has_attribute(kNumActive) ? group.read_attribute_count(kNumActive) : total;
  if (active > total)
    group.refuse(group.where(kNumActive), fmt::format("must be at most the {} bodies", total),
                 active);
  if (group.has_attribute(kTestParticleType))
    ps.test_particle_type = read_choice(group, kTestParticleType, {0, 1});
  if (active < total) {
    if (ranks && how.bodies)  // every rank reads the same attribute: every one throws
      group.fail(
          "test particles: read by one process (the decomposed read does not take them yet)");
    ps.n_active = active;  // read_checkpoint_header: as in the file, over no bodies
  }

  // Where row r of array k is (version 2: the positions and velocities are the view's).
  auto place = [&](std::size_t k) -> RowPlace {
    if (!view || k >= kViewed) return place_in(group, kArrays[k].name);
    const std::string name = view->where(kViewName[k / 3]);
    return [name, k](std::uint64_t row) { return fmt::format("{}[{}, {}]", name, row, k % 3); };
  };
  // The values in the whole reader's order: array by array, row by row.
  std::optional<Found> bad;
  for (std::size_t k = 0; k < kArrays.size() && !bad; ++k) {
    const std::string name = kArrays[k].name;
    if (name == "ax" || name == "ay" || name == "az") continue;  // checked below, when valid
    bad = first_bad(group, place(k), ps.*kArrays[k].member, range_of(name), first, k, active);
  }
  io_detail::throw_first_in_file(ranks, bad);
  // Ids other than 0 (no id) are unique over the file: collisions and outputs find bodies by id.
  if (const auto r = io_detail::first_repeated_id(ps.id, first, ranks, true)) {
    group.refuse(fmt::format("{}[{}]", group.where("id"), r->again),
                 fmt::format("is used twice (also by body {})", r->first), r->id);
  }

  ps.dim = read_choice(group, "dim", {2, 3});
  if (ps.dim == 2) {  // planar runs hold z = vz = 0 exactly
    for (std::uint64_t stage = 0; stage < 2 && !bad; ++stage) {
      const std::vector<double>& v = stage == 0 ? ps.z : ps.vz;
      const RowPlace where_z = place(stage == 0 ? 2 : 5);
      for (std::size_t i = 0; i < v.size() && !bad; ++i) {
        if (v[i] == 0) continue;
        const std::string where = where_z(first + i);
        bad = Found{stage, first + i,
                    input_error(group.file() + ": " + where,
                                "must be 0 in a planar (dim 2) checkpoint", v[i])
                        .what()};
      }
    }
    io_detail::throw_first_in_file(ranks, bad);
  }
  ps.time = read_scalar(group, "time", Range::Finite);
  if (read_choice(group, "accelerations_valid", {0, 1}) == 1) {
    for (std::uint64_t k = 0; k < 3 && !bad; ++k) {
      const char* name = k == 0 ? "ax" : k == 1 ? "ay" : "az";
      const auto& v = k == 0 ? ps.ax : k == 1 ? ps.ay : ps.az;
      bad = first_bad(group, place_in(group, name), v, Range::Finite, first, k);
    }
    io_detail::throw_first_in_file(ranks, bad);
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
    const std::uint64_t n = total;
    const hdf5::Shape s = group.dataset_shape("integrator_state");
    if (s.size() != 1 || s[0] != 48 * n) {
      group.fail(fmt::format("{} has shape ({}), IAS15's state for {} bodies has {} values",
                             group.where("integrator_state"), fmt::join(s, ", "), n, 48 * n));
    }
    if (how.bodies) {  // the attributes alone leave it for the read of the bodies
      state.integrator.values = group.read_doubles("integrator_state");
      if (const auto f = first_bad(group, place_in(group, "integrator_state"),
                                   state.integrator.values, Range::Finite, 0, 0))
        throw Error(f->message);
      state.integrator.next_dt = read_scalar(group, "integrator_next_dt", Range::Positive);
    }
  }
  return state;
}

}  // namespace

CheckpointState read_checkpoint(const fs::path& path) {
  std::size_t total = 0;
  return read_checkpoint_rows(path, {}, total);
}

CheckpointState read_checkpoint_share(const fs::path& path, ForceReducer& group,
                                      std::size_t& total) {
  return read_checkpoint_rows(path, {&group, true}, total);
}

CheckpointState read_checkpoint_header(const fs::path& path) {
  std::size_t total = 0;
  return read_checkpoint_rows(path, {nullptr, false}, total);
}

}  // namespace nbody
