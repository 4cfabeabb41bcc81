// Writing snapshots in the GADGET/SWIFT HDF5 layout (docs/snapshots.md), by one process or
// in a decomposed run by every rank at once, each its own rows (the bodies in the ranks'
// order, not by id: the readers take them in any order); and the layout checkpoints share.
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include "io/hdf5_file.hpp"
#include "io/io_trace.hpp"
#include "io/share_checks.hpp"
#include "io/snapshot_layout.hpp"
#include "io/snapshot_parameters_hdf5.hpp"
#include "io/written_together.hpp"
#include "nbody/distributed.hpp"
#include "nbody/error.hpp"
#include "nbody/snapshot.hpp"

namespace nbody {

namespace fs = std::filesystem;

namespace snapshot_layout {

void write_header(hdf5::Group& root, std::uint64_t n, double time, int dim,
                  hdf5::Precision precision, std::uint64_t tests, int test_type, double body_mass) {
  hdf5::Group header = root.create_group("Header");
  // GADGET's counts are 32-bit; NumPart_Total_HighWord holds the bits above (N >= 2^32).
  std::vector<std::uint32_t> low(6, 0), high(6, 0);
  low[kBodyType] = static_cast<std::uint32_t>(n & 0xffffffffu);
  high[kBodyType] = static_cast<std::uint32_t>(n >> 32);
  low[kTestType] = static_cast<std::uint32_t>(tests & 0xffffffffu);
  high[kTestType] = static_cast<std::uint32_t>(tests >> 32);
  header.write_attribute("NumPart_ThisFile", low);
  header.write_attribute("NumPart_Total", low);
  header.write_attribute("NumPart_Total_HighWord", high);
  std::vector<double> mass_table(6, 0.0);  // 0: masses per body (the Masses dataset)
  mass_table[kBodyType] = body_mass;
  header.write_attribute("MassTable", mass_table);
  header.write_attribute("Time", time);
  header.write_attribute("Redshift", 0.0);
  // 0: an isolated system around the origin. yt then infers the domain from the
  // positions; BoxSize > 0 would make it a periodic box [0, BoxSize]^3.
  header.write_attribute("BoxSize", 0.0);
  header.write_attribute("NumFilesPerSnapshot", std::int32_t{1});
  // OmegaLambda = 0 tells yt (and GADGET readers) that this is not a cosmological run.
  header.write_attribute("Omega0", 0.0);
  header.write_attribute("OmegaLambda", 0.0);
  header.write_attribute("HubbleParam", 1.0);
  header.write_attribute("Flag_DoublePrecision",
                         std::int32_t{precision == hdf5::Precision::Double ? 1 : 0});
  header.write_attribute("Dimension", std::int32_t{dim});  // nbody's: 2 for planar systems
  if (tests > 0) header.write_attribute(kTestParticleType, std::int32_t{test_type});
}

bool ids_usable(const std::vector<std::uint64_t>& ids) {
  if (std::find(ids.begin(), ids.end(), std::uint64_t{0}) != ids.end()) return false;
  // A bitmap over the ids' range where it is dense (ids numbered from 1), not a sort.
  return !io_detail::first_repeated_id(ids, 0, nullptr, false);
}

bool ids_usable_over(const std::vector<std::uint64_t>& ids, ForceReducer* group,
                     std::optional<bool>* known) {
  if (known && known->has_value()) return **known;
  bool usable = false;
  if (group == nullptr) {
    usable = ids_usable(ids);
  } else {
    const bool zero = std::find(ids.begin(), ids.end(), std::uint64_t{0}) != ids.end();
    const bool zeros = group->max(zero ? 1 : 0) != 0;  // every rank calls both collectives
    usable = !io_detail::first_repeated_id(ids, 0, group, false) && !zeros;
  }
  if (known) *known = usable;
  return usable;
}

std::vector<std::uint64_t> snapshot_ids(const ParticleSystem& ps) {
  if (ids_usable(ps.id)) return ps.id;
  std::vector<std::uint64_t> ids(ps.size());
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = i + 1;
  return ids;
}

}  // namespace snapshot_layout

namespace {

/// The datasets of what a snapshot holds for one group of bodies, at their full size.
struct Columns {
  hdf5::Precision precision;
  bool radii, acceleration, potential;
  bool narrow_ids;   // 32-bit ParticleIDs
  double body_mass;  // > 0: every type-1 body's (Header/MassTable, no Masses); 0: per body
};

/// This rank's largest id and the range of its first `active` masses, in one pass on threads
/// (a pass over each on one thread took 1.7 s at 2^29 bodies a rank).
struct BodyFacts {
  std::uint64_t largest_id = 0;
  double lightest = std::numeric_limits<double>::infinity();
  double heaviest = -std::numeric_limits<double>::infinity();
};

BodyFacts body_facts(const ParticleSystem& ps, std::size_t active) {
  std::uint64_t largest = 0;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  const std::uint64_t* id = ps.id.data();
  const double* m = ps.mass.data();
  const auto n = std::ptrdiff_t(ps.size()), a = std::ptrdiff_t(active);
#pragma omp parallel for reduction(max                                        \
                                   : largest) reduction(min                   \
                                                        : lo) reduction(max   \
                                                                        : hi) \
    schedule(static) if (n > 65536)
  for (std::ptrdiff_t i = 0; i < n; ++i) {
    largest = std::max(largest, id[i]);
    if (i < a) lo = std::min(lo, m[i]), hi = std::max(hi, m[i]);
  }
  return {largest, lo, hi};
}

/// Collective with a group. The mass every one of the file's active bodies has, where they
/// all have the same one (> 0), else 0. GADGET then stores it once in Header/MassTable and
/// writes no Masses dataset: 4 of a float snapshot's 32 bytes a body (28 B at 2^30 bodies
/// is 30.1 GB instead of 34.4), read by yt, pynbody and nbody's reader alike.
double common_mass(const BodyFacts& facts, std::size_t active, ForceReducer* group) {
  // This rank's answer as 64 bits: the mass's own, 0 (the bits of +0.0) for none in common,
  // or kNoBodies where the rank writes no active body (it then has no say).
  constexpr std::uint64_t kNoBodies = ~std::uint64_t{0};
  std::uint64_t mine = kNoBodies;
  if (active > 0) {
    const double m = facts.lightest;
    const bool common = m == facts.heaviest && m > 0 && std::isfinite(m);
    mine = common ? std::bit_cast<std::uint64_t>(m) : 0;
  }
  std::vector<std::uint64_t> all{mine};
  if (group) all = io_detail::every_rank_count(*group, mine);
  std::uint64_t found = kNoBodies;
  for (const std::uint64_t v : all) {
    if (v == kNoBodies) continue;
    if (found != kNoBodies && v != found) return 0.0;
    found = v;
  }
  return found == kNoBodies ? 0.0 : std::bit_cast<double>(found);
}

/// Collective with a group. Whether every id the file holds is below 2^32, so that its
/// ParticleIDs take 32 bits as GADGET's do by default (4 bytes a body less: 11 % of a float
/// snapshot): usable ids by their largest over every rank, else the rows' numbers 1..N.
bool narrow_ids(const ParticleSystem& ps, const BodyFacts& facts, bool usable,
                ForceReducer* group) {
  std::uint64_t largest = usable ? facts.largest_id : ps.size();
  if (group) {  // unusable ids: each rank's count, numbered over the file
    const std::vector<std::uint64_t> all = io_detail::every_rank_count(*group, largest);
    largest = usable ? *std::max_element(all.begin(), all.end())
                     : std::accumulate(all.begin(), all.end(), std::uint64_t{0});
  }
  return largest <= std::numeric_limits<std::uint32_t>::max();
}

/// `masses`: the Masses dataset (false: the header's MassTable gives them).
void create_bodies(hdf5::Group& root, const char* name, std::uint64_t rows, Columns c,
                   bool masses) {
  hdf5::Group bodies = root.create_group(name);
  bodies.create_values("Coordinates", rows, 3, c.precision);
  bodies.create_values("Velocities", rows, 3, c.precision);
  if (masses) bodies.create_values("Masses", rows, 1, c.precision);
  bodies.create_ids("ParticleIDs", rows, c.narrow_ids);
  if (c.radii) bodies.create_values("Radii", rows, 1, c.precision);
  if (c.acceleration) bodies.create_values("Accelerations", rows, 3, c.precision);
  if (c.potential) bodies.create_values("Potential", rows, 1, c.precision);
}

/// Writes bodies [first, last) of `ps` (and of `potential`) as the rows from `offset` of the
/// group `name`; `usable` false: ids numbered from `first_id`, as one process numbers the
/// rows of the file.
void write_bodies(hdf5::File& file, const char* name, std::uint64_t offset,
                  const ParticleSystem& ps, std::size_t first, std::size_t last,
                  const std::vector<double>* potential, bool usable, std::uint64_t first_id,
                  Columns c, bool masses) {
  hdf5::Group bodies = file.root().open_group(name);
  const std::size_t n = last - first;
  auto rows = [&](const std::vector<double>& v) { return std::span(v).subspan(first, n); };
  bodies.write_rows_at("Coordinates", offset, rows(ps.x), rows(ps.y), rows(ps.z), c.precision);
  bodies.write_rows_at("Velocities", offset, rows(ps.vx), rows(ps.vy), rows(ps.vz), c.precision);
  if (masses) bodies.write_values_at("Masses", offset, rows(ps.mass), c.precision);
  if (usable) {
    bodies.write_ids_at("ParticleIDs", offset, std::span(ps.id).subspan(first, n), c.narrow_ids);
  } else {
    std::vector<std::uint64_t> numbered(n);
    for (std::size_t i = 0; i < n; ++i) numbered[i] = first_id + i;
    bodies.write_ids_at("ParticleIDs", offset, numbered, c.narrow_ids);
  }
  if (c.radii) bodies.write_values_at("Radii", offset, rows(ps.radius), c.precision);
  if (c.acceleration)
    bodies.write_rows_at("Accelerations", offset, rows(ps.ax), rows(ps.ay), rows(ps.az),
                         c.precision);
  if (c.potential) bodies.write_values_at("Potential", offset, rows(*potential), c.precision);
}

/// write_snapshot's work; with a group, ps (and potential) are this rank's bodies.
void write_snapshot_rows(const fs::path& path, const ParticleSystem& ps,
                         const SnapshotOptions& options, const std::vector<double>* potential,
                         ForceReducer* group) {
  io_detail::IoTrace trace(
      fmt::format("rank {} {} checks", group ? group->part() : 0, path.filename().string()));
  std::string problem;
  if (potential != nullptr && potential->size() != ps.size()) {
    problem = fmt::format("{}: cannot write snapshot (potential has {} values for {} bodies)",
                          path.string(), potential->size(), ps.size());
  }
  if (!group && !problem.empty()) throw Error(problem);
  if (group) io_detail::throw_what_any_found(*group, problem);
  if (group && group->max(ps.has_test_particles() ? 1 : 0) != 0)
    throw Error(fmt::format(
        "{}: cannot write snapshot (test particles: written by one process (the decomposed "
        "write does not take them yet))",
        path.string()));
  // What the layout takes from every rank's bodies (collectives: every rank asks alike).
  const bool radii =
      options.radius || (group ? group->max(ps.has_radii() ? 1 : 0) != 0 : ps.has_radii());
  const bool with_potential =
      group ? group->max(potential != nullptr ? 1 : 0) != 0 : potential != nullptr;
  if (group && with_potential && group->max(potential == nullptr ? 1 : 0) != 0)
    throw Error(fmt::format("{}: cannot write snapshot (the potentials of some ranks' bodies only)",
                            path.string()));
  trace.mark("agree");
  const bool usable = snapshot_layout::ids_usable_over(ps.id, group, options.ids_usable);
  trace.mark("ids");
  // One process's test particles (the bodies from active_count()) go to their own group,
  // with their Masses (0) always.
  const std::uint64_t active = ps.active_count(), tests = ps.size() - active;
  const BodyFacts facts = body_facts(ps, active);
  const Columns columns{options.precision == SnapshotPrecision::Double ? hdf5::Precision::Double
                                                                       : hdf5::Precision::Float,
                        radii,
                        options.acceleration,
                        with_potential,
                        narrow_ids(ps, facts, usable, group),
                        common_mass(facts, active, group)};
  const bool body_masses = columns.body_mass == 0.0;
  trace.mark("columns");
  using snapshot_layout::kBodyGroup, snapshot_layout::kTestGroup;
  io_detail::write_together(
      path, group, ps.size(),
      [&](hdf5::File& file, std::uint64_t total) {
        snapshot_layout::write_header(file.root(), total - tests, ps.time, ps.dim,
                                      columns.precision, tests, ps.test_particle_type,
                                      columns.body_mass);
        create_bodies(file.root(), kBodyGroup, total - tests, columns, body_masses);
        if (tests > 0) create_bodies(file.root(), kTestGroup, tests, columns, true);
        if (options.parameters) snapshot_layout::write_parameters(file.root(), *options.parameters);
      },
      [&](hdf5::File& file, std::uint64_t offset) {
        if (tests == 0) {  // ids numbered by row over the file when not usable
          write_bodies(file, kBodyGroup, offset, ps, 0, ps.size(), potential, usable, offset + 1,
                       columns, body_masses);
          return;
        }
        write_bodies(file, kBodyGroup, 0, ps, 0, active, potential, usable, 1, columns,
                     body_masses);
        write_bodies(file, kTestGroup, 0, ps, active, ps.size(), potential, usable, active + 1,
                     columns, true);
      });
}

}  // namespace

void write_snapshot(const fs::path& path, const ParticleSystem& ps, const SnapshotOptions& options,
                    const std::vector<double>* potential) {
  write_snapshot_rows(path, ps, options, potential, nullptr);
}

void write_snapshot_share(const fs::path& path, const ParticleSystem& ps,
                          const SnapshotOptions& options, const std::vector<double>* potential,
                          ForceReducer& group) {
  write_snapshot_rows(path, ps, options, potential, &group);
}

}  // namespace nbody
