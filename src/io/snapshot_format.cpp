// Snapshots in the GADGET/SWIFT HDF5 layout (docs/reference-values.md "Snapshot files",
// docs/snapshots.md): read from our files (written by snapshot_write.cpp) and from
// GADGET-2/3/4 and SWIFT output.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "io/checkpoint_layout.hpp"
#include "io/hdf5_detail.hpp"
#include "io/hdf5_file.hpp"
#include "io/share_checks.hpp"
#include "io/snapshot_layout.hpp"
#include "io/snapshot_rows.hpp"
#include "nbody/distributed.hpp"
#include "nbody/error.hpp"
#include "nbody/gravity.hpp"
#include "nbody/snapshot.hpp"

namespace nbody {

namespace fs = std::filesystem;

bool have_hdf5() {
  return true;
}

// ---- Reading ----------------------------------------------------------------------

namespace {

/// Memory per body while a snapshot is read: the 13 arrays of a ParticleSystem and the 9
/// values per body of the datasets read (positions, velocities, mass, radius, id).
constexpr std::uint64_t kBytesPerBodyRead = 22 * 8;

/// Header values that decide how the particle groups are read.
struct HeaderInfo {
  std::array<std::uint64_t, 6> counts{};  // NumPart_ThisFile (+ HighWord)
  std::array<double, 6> mass_table{};     // 0: per-body Masses
  bool has_mass_table = false;
  int test_type = -1;  // /Header/TestParticleType: PartType3 holds test particles (-1: none)
};

std::string index_name(const std::string& what, std::size_t i) {
  return fmt::format("{}[{}]", what, i);
}

HeaderInfo read_header(const hdf5::Group& header, ParticleSystem& ps) {
  HeaderInfo info;
  if (header.has_attribute("NumFilesPerSnapshot")) {
    const std::uint64_t files = header.read_attribute_count("NumFilesPerSnapshot");
    if (files > 1) {
      header.fail(
          fmt::format("{} is {}: multi-file snapshots are not supported (join the files "
                      "into one first)",
                      header.where("NumFilesPerSnapshot"), files));
    }
  }
  const std::vector<std::uint64_t> counts = header.read_attribute_uint64("NumPart_ThisFile");
  if (counts.size() != 6) {
    header.fail(fmt::format("{} has {} values, expected 6 (one per particle type)",
                            header.where("NumPart_ThisFile"), counts.size()));
  }
  std::copy(counts.begin(), counts.end(), info.counts.begin());
  // 32-bit counts carry the bits above 2^32 in NumPart_Total_HighWord (single file:
  // ThisFile == Total).
  if (header.attribute_element_size("NumPart_ThisFile") <= 4 &&
      header.has_attribute("NumPart_Total_HighWord")) {
    const std::vector<std::uint64_t> high = header.read_attribute_uint64("NumPart_Total_HighWord");
    if (high.size() == 6) {
      for (std::size_t t = 0; t < 6; ++t) info.counts[t] += high[t] << 32;
    }
  }
  if (header.has_attribute("MassTable")) {
    const std::vector<double> table = header.read_attribute_doubles("MassTable");
    if (table.size() != 6) {
      header.fail(
          fmt::format("{} has {} values, expected 6", header.where("MassTable"), table.size()));
    }
    std::copy(table.begin(), table.end(), info.mass_table.begin());
    info.has_mass_table = true;
  }
  for (std::size_t t = 0; t < 6 && info.has_mass_table; ++t) {
    if (!std::isfinite(info.mass_table[t]) || info.mass_table[t] < 0) {
      header.refuse(index_name(header.where("MassTable"), t), "must be finite and >= 0",
                    info.mass_table[t]);
    }
  }
  ps.time = header.read_attribute_double("Time");
  if (!std::isfinite(ps.time)) header.refuse(header.where("Time"), "must be finite", ps.time);
  if (header.has_attribute("Dimension")) {
    const double dim = header.read_attribute_double("Dimension");
    if (dim != 2 && dim != 3) header.refuse(header.where("Dimension"), "must be 2 or 3", dim);
    ps.dim = static_cast<int>(dim);
  }
  if (header.has_attribute(snapshot_layout::kTestParticleType)) {
    const double type = header.read_attribute_double(snapshot_layout::kTestParticleType);
    if (type != 0 && type != 1)
      header.refuse(header.where(snapshot_layout::kTestParticleType), "must be 0 or 1", type);
    info.test_type = static_cast<int>(type);
  }
  return info;
}

/// What a dataset's values must be (ValueRule): any finite number, finite and >= 0 (radii,
/// masses: mass 0 is a test particle's), or finite and > 0 (an active body's mass).
using Range = ValueRule;

/// The rows of a type's datasets one reader takes: [first, first + rows) of its N.
struct RowWindow {
  std::uint64_t first = 0, rows = 0;
};

/// `first`: the row of v's first value (messages name the file's rows).
void check_values(const hdf5::Group& group, const std::string& name, const std::vector<double>& v,
                  std::size_t columns, Range range, std::uint64_t first = 0) {
  for (std::size_t k = 0; k < v.size(); ++k) {
    if (obeys(v[k], range)) continue;
    const std::string at =
        columns > 1 ? fmt::format("{}[{}][{}]", group.where(name), first + k / columns, k % columns)
                    : index_name(group.where(name), first + k);
    group.refuse(at, rule_text(range), v[k]);
  }
}

/// Reads rows w of an N x 3 (columns 3) or N (columns 1) dataset, checking its shape against
/// N. `n_from` says where N comes from, for the message ("/Header/NumPart_ThisFile[1] is 4").
std::vector<double> read_checked(const hdf5::Group& group, const std::string& name,
                                 std::size_t columns, std::uint64_t n, const std::string& n_from,
                                 Range range, RowWindow w) {
  const hdf5::Shape shape = group.dataset_shape(name);
  const bool rows_ok = !shape.empty() && shape[0] == n;
  const bool columns_ok =
      columns == 1 ? shape.size() == 1 : shape.size() == 2 && shape[1] == columns;
  if (!columns_ok) {
    group.fail(
        fmt::format("{} has shape ({}), expected ({})", group.where(name), fmt::join(shape, ", "),
                    columns == 1 ? fmt::format("{}", n) : fmt::format("{}, {}", n, columns)));
  }
  if (!rows_ok) group.fail(fmt::format("{} has {} rows, {}", group.where(name), shape[0], n_from));
  std::vector<double> values = group.read_doubles(name, w.first, w.rows, columns);
  check_values(group, name, values, columns, range, w.first);
  return values;
}

/// Appends the bodies w of one PartType group. Returns false when it has no ParticleIDs.
bool append_group(const hdf5::Group& group, const HeaderInfo& header, std::size_t type, RowWindow w,
                  ParticleSystem& ps) {
  const std::uint64_t n = header.counts[type];
  // Positions set N (checked against the header); every other dataset must agree.
  const std::string count = fmt::format("/Header/NumPart_ThisFile[{}] is {}", type, n);
  const std::vector<double> positions =
      read_checked(group, "Coordinates", 3, n, count, Range::Finite, w);
  const std::string rows_of = fmt::format("{} has {}", group.where("Coordinates"), n);
  const std::vector<double> velocities =
      read_checked(group, "Velocities", 3, n, rows_of, Range::Finite, w);
  std::vector<double> masses;
  if (group.has("Masses")) {
    masses = read_checked(group, "Masses", 1, n, rows_of, Range::NonNegative, w);
  } else if (header.mass_table[type] > 0 && std::isfinite(header.mass_table[type])) {
    masses.assign(w.rows, header.mass_table[type]);
  } else {
    group.fail(fmt::format("{} is missing and /Header/MassTable[{}] is {}", group.where("Masses"),
                           type,
                           header.has_mass_table ? fmt::format("{}", header.mass_table[type])
                                                 : std::string("missing")));
  }
  std::vector<double> radii(w.rows, 0.0);
  if (group.has("Radii"))
    radii = read_checked(group, "Radii", 1, n, rows_of, Range::NonNegative, w);
  const bool has_ids = group.has("ParticleIDs");
  std::vector<std::uint64_t> ids;
  if (has_ids) {
    const hdf5::Shape shape = group.dataset_shape("ParticleIDs");
    if (shape.size() != 1 || shape[0] != n) {
      group.fail(fmt::format("{} has shape ({}), {}", group.where("ParticleIDs"),
                             fmt::join(shape, ", "), rows_of));
    }
    ids = group.read_ids("ParticleIDs", w.first, w.rows);
    const auto zero = std::find(ids.begin(), ids.end(), std::uint64_t{0});
    if (zero != ids.end()) {
      group.fail(fmt::format("{}[{}] is 0 (ids must be >= 1)", group.where("ParticleIDs"),
                             w.first + std::uint64_t(zero - ids.begin())));
    }
  }

  const std::size_t first = ps.size();
  ps.resize(first + w.rows);
  for (std::size_t i = 0; i < w.rows; ++i) {
    const std::size_t j = first + i;
    ps.x[j] = positions[3 * i];
    ps.y[j] = positions[3 * i + 1];
    ps.z[j] = positions[3 * i + 2];
    ps.vx[j] = velocities[3 * i];
    ps.vy[j] = velocities[3 * i + 1];
    ps.vz[j] = velocities[3 * i + 2];
    ps.mass[j] = masses[i];
    ps.radius[j] = radii[i];
    ps.id[j] = has_ids ? ids[i] : 0;
  }
  if (ps.dim == 2) {  // planar systems hold z = vz = 0 exactly
    for (const auto& [name, rows] :
         {std::pair{"Coordinates", &positions}, std::pair{"Velocities", &velocities}}) {
      for (std::size_t i = 0; i < w.rows; ++i) {
        const double z = (*rows)[3 * i + 2];
        if (z != 0)
          group.fail(fmt::format("{}[{}][2] is {}, but /Header/Dimension is 2", group.where(name),
                                 w.first + i, z));
      }
    }
  }
  return has_ids;
}

/// Ids from the file must be usable as ours (>= 1, checked per group; unique, checked
/// here across groups): collisions and output rely on it.
void check_unique_ids(const hdf5::Group& root, const ParticleSystem& ps) {
  if (const auto r = io_detail::first_repeated_id(ps.id, 0, nullptr, false))
    root.fail(io_detail::repeated_id(r->id, r->first, r->again));
}

/// Where the bodies of one group are: from body `first` of the system read, the rows from
/// `row` of the dataset `masses` ("/PartType1/Masses").
struct Segment {
  std::string masses;
  std::size_t first = 0;
  std::uint64_t row = 0;
};

/// "/PartType1/Masses[5]": the row of body i (segments in reading order, the first from 0).
std::string place_of(const std::vector<Segment>& segments, std::size_t i) {
  auto at = std::upper_bound(segments.begin(), segments.end(), i,
                             [](std::size_t body, const Segment& s) { return body < s.first; });
  --at;
  return index_name(at->masses, at->row + (i - at->first));
}

/// A checkpoint read as a snapshot: its n_active when it has test particles (/Checkpoint's,
/// its view holding every body in PartType1), and its test particle type.
std::optional<std::uint64_t> checkpoint_active(const hdf5::Group& root, std::uint64_t n,
                                               int& type_out) {
  using namespace checkpoint_layout;
  if (!root.has(kGroup)) return std::nullopt;
  const hdf5::Group state = root.open_group(kGroup);
  if (state.has_attribute(kTestParticleType)) {
    const double type = state.read_attribute_double(kTestParticleType);
    if (type != 0 && type != 1)
      state.refuse(state.where(kTestParticleType), "must be 0 or 1", type);
    type_out = static_cast<int>(type);
  }
  if (!state.has_attribute(kNumActive)) return std::nullopt;
  const std::uint64_t active = state.read_attribute_count(kNumActive);
  if (active > n)
    state.refuse(state.where(kNumActive), fmt::format("must be at most the {} bodies", n), active);
  return active;
}

/// The test particles of a snapshot read whole: PartType3's where /Header/TestParticleType
/// says so (read last), a checkpoint's n_active, or else the massless bodies, which must
/// come after every body with mass. The active bodies have mass > 0, and some body has mass.
void find_test_particles(const hdf5::Group& root, const HeaderInfo& header,
                         const std::vector<Segment>& segments, ParticleSystem& ps) {
  std::optional<std::uint64_t> active;
  if (header.test_type >= 0) {
    active = ps.size() - header.counts[snapshot_layout::kTestType];
    ps.test_particle_type = header.test_type;
  } else {
    active = checkpoint_active(root, ps.size(), ps.test_particle_type);
  }
  if (active) {
    for (std::size_t i = 0; i < *active; ++i) {
      if (!(ps.mass[i] > 0))
        root.refuse(place_of(segments, i), rule_text(ValueRule::Positive), ps.mass[i]);
    }
    if (*active < ps.size()) ps.n_active = *active;
  } else if (const std::size_t after = mark_massless_test_particles(ps); after < ps.size()) {
    const auto massless =
        std::size_t(std::find(ps.mass.begin(), ps.mass.end(), 0.0) - ps.mass.begin());
    root.fail(fmt::format(
        "{}: a body with mass after the test particles (mass 0 from {}): test particles come last",
        place_of(segments, after), place_of(segments, massless)));
  }
  if (std::none_of(ps.mass.begin(), ps.mass.end(), [](double m) { return m > 0; }))
    root.fail("no body has mass: test particles need at least one body with mass");
}

/// A share of a decomposed read: test particles (massless bodies, PartType3's, a
/// checkpoint's) are refused, the order of the whole file's bodies being no share's to check.
void refuse_test_particles_in_shares(const hdf5::Group& root, const HeaderInfo& header,
                                     std::uint64_t total, const ParticleSystem& ps) {
  int type = 0;
  if (header.test_type >= 0 || checkpoint_active(root, total, type) ||
      std::find(ps.mass.begin(), ps.mass.end(), 0.0) != ps.mass.end())
    root.fail("test particles: read by one process (the decomposed read does not take them yet)");
}

}  // namespace

namespace io_detail {

ParticleSystem read_snapshot_rows(const fs::path& path, ForceReducer* group,
                                  std::size_t& total_out) {
  const hdf5::File file = hdf5::File::open(path);
  const hdf5::Group& root = file.root();
  if (!root.has("Header")) {
    root.fail("/Header is missing (not a GADGET/SWIFT-layout snapshot)");
  }
  ParticleSystem ps;
  const hdf5::Group header_group = root.open_group("Header");
  const HeaderInfo header = read_header(header_group, ps);
  // Before anything is allocated: the bodies' arrays, and what reading them holds at once.
  std::uint64_t total = 0;
  for (std::uint64_t count : header.counts) {
    if (count > (std::uint64_t{1} << 56) - total) {
      header_group.refuse(header_group.where("NumPart_ThisFile"), "too many bodies", count);
    }
    total += count;
  }
  if (total == 0) {
    header_group.refuse(header_group.where("NumPart_ThisFile"),
                        "the snapshot holds no bodies (every count is 0)", total);
  }
  total_out = static_cast<std::size_t>(total);
  const ShareRange mine =
      group ? share_range(total_out, group->part(), group->parts()) : ShareRange{0, total_out};
  hdf5::detail::check_memory("/Header/NumPart_ThisFile", mine.last - mine.first, kBytesPerBodyRead,
                             header_group);
  bool all_ids = true;
  std::uint64_t at = 0;  // the type's first body over the file
  std::vector<Segment> segments;
  // In type order, except that test particles (PartType3 with TestParticleType) come last.
  const bool tests_last = header.test_type >= 0;
  for (const std::size_t type : tests_last ? std::array<std::size_t, 6>{0, 1, 2, 4, 5, 3}
                                           : std::array<std::size_t, 6>{0, 1, 2, 3, 4, 5}) {
    const std::string name = fmt::format("PartType{}", type);
    if (!root.has(name)) {
      if (header.counts[type] != 0) {
        root.fail(fmt::format("/{} is missing, but /Header/NumPart_ThisFile[{}] is {}", name, type,
                              header.counts[type]));
      }
      continue;
    }
    const hdf5::Group group_of_type = root.open_group(name);
    // Some writers keep an empty group for a type without particles.
    if (header.counts[type] == 0 && !group_of_type.has("Coordinates")) continue;
    const std::uint64_t lo = std::max<std::uint64_t>(mine.first, at);
    const std::uint64_t hi = std::min<std::uint64_t>(mine.last, at + header.counts[type]);
    const RowWindow w{lo - std::min(lo, at), hi > lo ? hi - lo : 0};
    segments.push_back({group_of_type.where("Masses"), ps.size(), w.first});
    all_ids = append_group(group_of_type, header, type, w, ps) && all_ids;
    at += header.counts[type];
  }
  if (group) {
    refuse_test_particles_in_shares(root, header, total, ps);
  } else {
    find_test_particles(root, header, segments, ps);
  }
  if (!all_ids) {  // ids from only some types could collide with 1..N
    for (std::size_t i = 0; i < ps.size(); ++i) ps.id[i] = mine.first + i + 1;
  } else if (group == nullptr) {
    check_unique_ids(root, ps);
  }
  return ps;
}

}  // namespace io_detail

ParticleSystem read_snapshot(const fs::path& path) {
  std::size_t total = 0;
  return io_detail::read_snapshot_rows(path, nullptr, total);
}

}  // namespace nbody
