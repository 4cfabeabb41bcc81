// A snapshot read in shares (issue "A billion bodies on two GPUs", item 3): each rank reads
// the rows of its share_range alone (HDF5 row selections), and the shares put together are
// read_snapshot's bodies, values and ids, whatever the number of ranks (thread ranks); what
// any rank refuses, every rank refuses with the same message, so none waits for another.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "io/share_checks.hpp"
#include "nbody/error.hpp"
#include "nbody/gravity.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/snapshot.hpp"
#include "test_helpers.hpp"
#include "thread_ranks.hpp"

#if NBODY_HAVE_HDF5
#include "io/hdf5_file.hpp"

namespace nbody {
namespace {

namespace fs = std::filesystem;

fs::path temporary(const std::string& name) {
  return fs::temp_directory_path() / (name + "_" + std::to_string(::getpid()) + ".hdf5");
}

struct Shares {
  std::vector<ParticleSystem> parts;
  std::vector<std::string> errors;
  std::vector<std::size_t> totals;
};

Shares read_shares(const fs::path& path, int parts) {
  struct One {
    ParticleSystem ps;
    std::string error;
    std::size_t total = 0;
  };
  const auto each = testing::run_parts<One>(parts, [&](std::shared_ptr<ForceReducer> r) {
    One one;
    try {
      one.ps = read_snapshot_share(path, *r, one.total);
    } catch (const Error& e) {
      one.error = e.what();
    }
    return one;
  });
  Shares s;
  for (const One& one : each) {
    s.parts.push_back(one.ps);
    s.errors.push_back(one.error);
    s.totals.push_back(one.total);
  }
  return s;
}

TEST(SnapshotShare, SharesPutTogetherAreTheWholeFileOnAnyNumberOfRanks) {
  const fs::path p = temporary("nbody_share");
  ParticleSystem written = generate({.model = "plummer", .n = 1001, .seed = 3, .radius = 0.01});
  written.time = 0.5;
  write_snapshot(p, written, {});
  const ParticleSystem whole = read_snapshot(p);
  for (const int parts : {1, 2, 3, 4}) {
    SCOPED_TRACE(parts);
    const Shares s = read_shares(p, parts);
    ParticleSystem joined;
    for (int r = 0; r < parts; ++r) {
      const ParticleSystem& mine = s.parts[std::size_t(r)];
      EXPECT_EQ(s.errors[std::size_t(r)], "");
      EXPECT_EQ(s.totals[std::size_t(r)], whole.size());
      const ShareRange w = share_range(whole.size(), r, parts);
      ASSERT_EQ(mine.size(), w.last - w.first);
      EXPECT_EQ(mine.time, whole.time);
      for (std::size_t i = 0; i < mine.size(); ++i) {
        const std::size_t j = w.first + i;
        EXPECT_EQ(mine.id[i], whole.id[j]);
        EXPECT_EQ(mine.x[i], whole.x[j]);
        EXPECT_EQ(mine.vz[i], whole.vz[j]);
        EXPECT_EQ(mine.mass[i], whole.mass[j]);
        EXPECT_EQ(mine.radius[i], whole.radius[j]);
      }
    }
  }
  fs::remove(p);
}

/// A file of 7 bodies of type 1 whose ids and masses the test picks.
fs::path seven_bodies(const std::string& name, const std::vector<std::uint64_t>& ids,
                      const std::vector<double>& masses) {
  const fs::path p = temporary(name);
  hdf5::File f = hdf5::File::create(p, p.string());
  hdf5::Group& root = f.root();
  {
    hdf5::Group h = root.create_group("Header");
    h.write_attribute("NumPart_ThisFile", std::vector<std::uint32_t>{0, 7, 0, 0, 0, 0});
    h.write_attribute("NumPart_Total", std::vector<std::uint32_t>{0, 7, 0, 0, 0, 0});
    h.write_attribute("MassTable", std::vector<double>(6, 0.0));
    h.write_attribute("Time", 0.0);
    h.write_attribute("NumFilesPerSnapshot", std::int32_t{1});
    hdf5::Group g = root.create_group("PartType1");
    const std::vector<double> x{1, 2, 3, 4, 5, 6, 7}, zero(7, 0.0);
    g.write_rows("Coordinates", x, zero, zero, hdf5::Precision::Double);
    g.write_rows("Velocities", zero, zero, zero, hdf5::Precision::Double);
    g.write_values("Masses", masses, hdf5::Precision::Double);
    if (!ids.empty()) g.write_ids("ParticleIDs", ids);
  }
  f.close();
  return p;
}

TEST(SnapshotShare, EveryRankRefusesWhatOneRankFinds) {
  const std::vector<double> masses(7, 1.0);
  // Ids 2 and 6 the same: on 3 ranks they are in different shares ([0,2) [2,4) [4,7)).
  const fs::path twice = seven_bodies("nbody_share_twice", {1, 9, 3, 4, 5, 6, 9}, masses);
  const std::string whole = test::error_of([&] { (void)read_snapshot(twice); });
  EXPECT_NE(whole.find("id 9 is used twice (bodies 1 and 6"), std::string::npos) << whole;
  for (const std::string& e : read_shares(twice, 3).errors) EXPECT_EQ(e, whole);
  // A negative mass in the last share only: the first ranks would otherwise wait for it.
  std::vector<double> bad = masses;
  bad[5] = -1;
  const fs::path zero = seven_bodies("nbody_share_zero", {1, 2, 3, 4, 5, 6, 7}, bad);
  const std::string refused = test::error_of([&] { (void)read_snapshot(zero); });
  EXPECT_NE(refused.find("Masses[5]"), std::string::npos) << refused;
  for (const std::string& e : read_shares(zero, 3).errors) EXPECT_EQ(e, refused);
  // A mass of 0 (a test particle) in the last share only: read by one process, not in shares.
  bad[5] = 0;
  const fs::path test = seven_bodies("nbody_share_test", {1, 2, 3, 4, 5, 6, 7}, bad);
  EXPECT_NE(test::error_of([&] { (void)read_snapshot(test); }).find("a body with mass after"),
            std::string::npos);
  for (const std::string& e : read_shares(test, 3).errors)
    EXPECT_EQ(e, test.string() +
                     ": test particles: read by one process (the decomposed read does not take "
                     "them yet)");
  fs::remove(test);
  // Without ids: numbered 1..N over the file, each share its own.
  const fs::path none = seven_bodies("nbody_share_noids", {}, masses);
  const Shares s = read_shares(none, 2);
  EXPECT_EQ(s.parts[0].id, (std::vector<std::uint64_t>{1, 2, 3}));
  EXPECT_EQ(s.parts[1].id, (std::vector<std::uint64_t>{4, 5, 6, 7}));
  for (const fs::path& p : {twice, zero, none}) fs::remove(p);
}

TEST(SnapshotShare, SharesCrossTheTypesAsTheWholeFileOrdersThem) {
  // GADGET's layout: 3 gas bodies (their own masses) then 4 of type 1 (masses from the
  // MassTable): shares of 2 and 3 ranks begin and end inside either type.
  const fs::path p = temporary("nbody_share_types");
  hdf5::File f = hdf5::File::create(p, p.string());
  {
    hdf5::Group& root = f.root();
    hdf5::Group h = root.create_group("Header");
    h.write_attribute("NumPart_ThisFile", std::vector<std::uint32_t>{3, 4, 0, 0, 0, 0});
    h.write_attribute("NumPart_Total", std::vector<std::uint32_t>{3, 4, 0, 0, 0, 0});
    h.write_attribute("MassTable", std::vector<double>{0, 0.5, 0, 0, 0, 0});
    h.write_attribute("Time", 0.0);
    h.write_attribute("NumFilesPerSnapshot", std::int32_t{1});
    hdf5::Group gas = root.create_group("PartType0");
    gas.write_rows("Coordinates", {-1, -2, -3}, {0, 0, 0}, {0, 0, 0}, hdf5::Precision::Float);
    gas.write_rows("Velocities", {0, 0, 0}, {1, 2, 3}, {0, 0, 0}, hdf5::Precision::Float);
    gas.write_values("Masses", {2, 3, 4}, hdf5::Precision::Float);
    gas.write_ids("ParticleIDs", {10, 11, 12});
    hdf5::Group dm = root.create_group("PartType1");
    dm.write_rows("Coordinates", {1, 2, 3, 4}, {0, 0, 0, 0}, {0, 0, 0, 0}, hdf5::Precision::Float);
    dm.write_rows("Velocities", {0, 0, 0, 0}, {4, 5, 6, 7}, {0, 0, 0, 0}, hdf5::Precision::Float);
    dm.write_ids("ParticleIDs", {1, 2, 3, 4});
  }
  f.close();
  const ParticleSystem whole = read_snapshot(p);
  ASSERT_EQ(whole.size(), 7u);
  for (const int parts : {2, 3}) {
    SCOPED_TRACE(parts);
    ParticleSystem joined;
    for (const ParticleSystem& mine : read_shares(p, parts).parts) {
      for (std::size_t i = 0; i < mine.size(); ++i)
        joined.add(Body{{mine.x[i], mine.y[i], mine.z[i]},
                        {mine.vx[i], mine.vy[i], mine.vz[i]},
                        mine.mass[i],
                        mine.radius[i],
                        mine.id[i]});
    }
    EXPECT_EQ(joined.x, whole.x);
    EXPECT_EQ(joined.vy, whole.vy);
    EXPECT_EQ(joined.mass, whole.mass);
    EXPECT_EQ(joined.id, whole.id);
  }
  fs::remove(p);
}

/// The repeat every rank finds among the rows of the whole list split over `parts` ranks in
/// order, and what one process finds in the whole list (which must agree).
void expect_same_repeat(const std::vector<std::uint64_t>& ids, bool zero_is_none,
                        const char* what) {
  const auto whole = io_detail::first_repeated_id(ids, 0, nullptr, zero_is_none);
  for (int parts : {1, 2, 3, 4}) {
    using Found = std::optional<io_detail::RepeatedId>;
    const auto each = testing::run_parts<Found>(parts, [&](std::shared_ptr<ForceReducer> r) {
      const ShareRange w = share_range(ids.size(), r->part(), r->parts());
      const std::vector<std::uint64_t> mine(ids.begin() + std::ptrdiff_t(w.first),
                                            ids.begin() + std::ptrdiff_t(w.last));
      return io_detail::first_repeated_id(mine, w.first, r.get(), zero_is_none);
    });
    for (const Found& f : each) {
      ASSERT_EQ(f.has_value(), whole.has_value()) << what << ", " << parts << " ranks";
      if (!f) continue;
      EXPECT_EQ(f->id, whole->id) << what;
      EXPECT_EQ(f->first, whole->first) << what;
      EXPECT_EQ(f->again, whole->again) << what;
    }
  }
}

TEST(SnapshotShare, RepeatedIdsAreFoundInDenseAndSparseRangesOnAnyNumberOfRanks) {
  // Dense (numbered from 1, shuffled: a bitmap of the whole range on every rank), spaced
  // (16 apart: each rank a bitmap of its part of the range) and sparse (ids ~2^50 apart:
  // sorted) lists, without repeats and with one across ranks, with and without zeros.
  std::vector<std::uint64_t> dense(5000), spaced(5000), sparse(5000);
  for (std::size_t i = 0; i < dense.size(); ++i) {
    dense[i] = (i * 2654435761u) % 5000 + 1;  // a permutation of 1..5000
    spaced[i] = dense[i] * 16 + 3;
    sparse[i] = dense[i] * (std::uint64_t(1) << 50) + 7;
  }
  for (auto* ids : {&dense, &spaced, &sparse}) {
    const char* what = ids == &dense ? "dense" : ids == &spaced ? "spaced" : "sparse";
    expect_same_repeat(*ids, false, what);
    EXPECT_FALSE(io_detail::first_repeated_id(*ids, 0, nullptr, false).has_value()) << what;
    std::vector<std::uint64_t> again = *ids;
    again[4321] = again[17];  // rows 17 and 4321
    const auto found = io_detail::first_repeated_id(again, 0, nullptr, false);
    ASSERT_TRUE(found.has_value()) << what;
    EXPECT_EQ(found->first, 17u);
    EXPECT_EQ(found->again, 4321u);
    expect_same_repeat(again, false, what);
    std::vector<std::uint64_t> zeros = *ids;
    zeros[5] = zeros[2500] = zeros[4999] = 0;  // left out when zero_is_none, else a repeat
    EXPECT_FALSE(io_detail::first_repeated_id(zeros, 0, nullptr, true).has_value()) << what;
    expect_same_repeat(zeros, true, what);
    expect_same_repeat(zeros, false, what);
    EXPECT_TRUE(io_detail::first_repeated_id(zeros, 0, nullptr, false).has_value()) << what;
  }
}

TEST(SnapshotShare, RepeatedIdsAreFoundAcrossRoundsAndBitmapParts) {
  // More ids than a round (2^21 a rank) on 1 and 2 ranks, 16 apart (the rounds) and numbered
  // from 1 (the whole range's bitmap, marked by threads): a repeat of an id of rank 0's first
  // round in rank 1's last round is found, and none where there is none.
  const std::size_t n = (std::size_t(1) << 22) + 1001;
  for (const std::uint64_t apart : {16, 1})
    for (int parts : {1, 2}) {
      std::vector<std::uint64_t> ids(n);
      for (std::size_t i = 0; i < n; ++i) ids[i] = ((i * 2654435761u) % n) * apart + 1;
      std::vector<std::uint64_t> again = ids;
      again[n - 3] = again[11];
      const auto found =
          testing::run_parts<std::pair<bool, bool>>(parts, [&](std::shared_ptr<ForceReducer> r) {
            const ShareRange w = share_range(n, r->part(), r->parts());
            auto mine = [&](const std::vector<std::uint64_t>& all) {
              return std::vector<std::uint64_t>(all.begin() + std::ptrdiff_t(w.first),
                                                all.begin() + std::ptrdiff_t(w.last));
            };
            const auto none = io_detail::first_repeated_id(mine(ids), w.first, r.get(), false);
            const auto one = io_detail::first_repeated_id(mine(again), w.first, r.get(), false);
            return std::pair{none.has_value(), one && one->first == 11 && one->again == n - 3};
          });
      for (const auto& [none, one] : found) {
        EXPECT_FALSE(none) << parts << " ranks, ids " << apart << " apart";
        EXPECT_TRUE(one) << parts << " ranks, ids " << apart << " apart";
      }
    }
}

}  // namespace
}  // namespace nbody

#endif  // NBODY_HAVE_HDF5
