// Checkpoints and snapshots of a decomposed run, written at once by every rank into one file
// and read back in shares (issue 36, item 3): whatever the number of ranks that wrote it
// (P = 1..4, thread ranks) the file holds one process's bodies (by id, every bit) and
// attributes, in the ranks' order; read whole or in shares on Q = 1..4 ranks it gives them
// back, every id once, and each rank its own rows, cuts and costs where as many read it.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "checkpoint_share_helpers.hpp"
#include "nbody/gravity.hpp"
#include "nbody/snapshot.hpp"
#include "test_helpers.hpp"
#include "thread_ranks.hpp"

#if NBODY_HAVE_HDF5

namespace nbody {
namespace {

namespace fs = std::filesystem;
using namespace testing_checkpoint_share;  // the helpers of this suite's files

/// Every value of the body of each id, bit for bit, and the scalars.
void expect_same_bodies(const CheckpointState& a, const CheckpointState& b) {
  ASSERT_EQ(a.particles.size(), b.particles.size());
  std::map<std::uint64_t, std::size_t> at;
  for (std::size_t j = 0; j < b.particles.size(); ++j) at[b.particles.id[j]] = j;
  ASSERT_EQ(at.size(), b.particles.size());
  const ParticleSystem &p = a.particles, &q = b.particles;
  for (std::size_t i = 0; i < p.size(); ++i) {
    ASSERT_EQ(at.count(p.id[i]), 1u) << p.id[i];
    const std::size_t j = at[p.id[i]];
    for (auto f :
         {&ParticleSystem::x, &ParticleSystem::y, &ParticleSystem::z, &ParticleSystem::vx,
          &ParticleSystem::vy, &ParticleSystem::vz, &ParticleSystem::ax, &ParticleSystem::ay,
          &ParticleSystem::az, &ParticleSystem::mass, &ParticleSystem::radius})
      ASSERT_EQ((p.*f)[i], (q.*f)[j]) << "id " << p.id[i];
  }
  EXPECT_EQ(p.time, q.time);
  EXPECT_EQ(p.dim, q.dim);
  EXPECT_EQ(p.accelerations_valid(), q.accelerations_valid());
  EXPECT_EQ(a.step, b.step);
  EXPECT_EQ(a.initial_energy, b.initial_energy);
  EXPECT_EQ(a.collisions.stages, b.collisions.stages);
  EXPECT_EQ(a.next_snapshot, b.next_snapshot);
  EXPECT_EQ(a.next_snapshot_time, b.next_snapshot_time);
  EXPECT_EQ(a.snapshot_origin, b.snapshot_origin);
  EXPECT_EQ(a.parameters, b.parameters);
}

TEST(CheckpointShare, WrittenByAnyNumberOfRanksReadsBackOnAnyNumber) {
  const fs::path dir = folder("nbody_cp_share");
  const CheckpointState state = sample_state(203);
  write_checkpoint(dir / "one.h5", state);
  const CheckpointState one = read_checkpoint(dir / "one.h5");
  expect_same_bodies(state, one);
  for (const int parts : {1, 2, 3, 4}) {
    SCOPED_TRACE(parts);
    const fs::path p = dir / ("ranks" + std::to_string(parts) + ".h5");
    for (const std::string& e : write_in_shares(p, state, parts)) EXPECT_EQ(e, "");
    const CheckpointState whole = read_checkpoint(p);
    expect_same_bodies(one, whole);
    // The snapshot view (-i, yt): the same bodies, in the file's order.
    const ParticleSystem view = read_snapshot(p);
    EXPECT_EQ(view.id, whole.particles.id);
    EXPECT_EQ(view.x, whole.particles.x);
    EXPECT_EQ(view.vz, whole.particles.vz);
    EXPECT_EQ(view.radius, whole.particles.radius);
    for (const int readers : {1, 2, 3, 4}) {
      SCOPED_TRACE(readers);
      const std::vector<Share> shares = read_in_shares(p, readers);
      CheckpointState joined = shares[0].state;
      joined.particles = ParticleSystem();
      for (int r = 0; r < readers; ++r) {
        const Share& s = shares[std::size_t(r)];
        ASSERT_EQ(s.error, "");
        EXPECT_EQ(s.total, state.particles.size());
        ShareRange w = share_range(s.total, r, readers);
        if (readers == parts) {  // as many ranks as wrote it: each takes back the rows it wrote
          w.first = 0;
          for (int q = 0; q < r; ++q) w.first += dealt(state.particles, q, parts).size();
          w.last = w.first + dealt(state.particles, r, parts).size();
        }
        ASSERT_EQ(s.state.particles.size(), w.last - w.first);
        EXPECT_TRUE(s.state.particles.accelerations_valid());
        EXPECT_EQ(s.state.step, one.step);
        for (std::size_t i = 0; i < s.state.particles.size(); ++i)
          EXPECT_EQ(s.state.particles.id[i], whole.particles.id[w.first + i]);
        const ParticleSystem& m = s.state.particles;
        for (std::size_t i = 0; i < m.size(); ++i) {
          joined.particles.add(Body{{m.x[i], m.y[i], m.z[i]},
                                    {m.vx[i], m.vy[i], m.vz[i]},
                                    m.mass[i],
                                    m.radius[i],
                                    m.id[i]});
          joined.particles.ax.back() = m.ax[i], joined.particles.ay.back() = m.ay[i];
          joined.particles.az.back() = m.az[i];
        }
      }
      joined.particles.time = shares[0].state.particles.time;
      joined.particles.dim = shares[0].state.particles.dim;
      joined.particles.set_accelerations_valid();
      expect_same_bodies(one, joined);  // every id once, every bit
    }
  }
  // The attributes alone, for a restart's options: no bodies read.
  const CheckpointState header = read_checkpoint_header(dir / "ranks3.h5");
  EXPECT_EQ(header.particles.size(), 0u);
  EXPECT_EQ(header.step, 77u);
  EXPECT_EQ(header.particles.time, 0.375);
  EXPECT_EQ(header.parameters, "dt = 0.005\n");
  fs::remove_all(dir);
}

// A decomposed CPU run's record of its ranks (issue 36: a restart on as many ranks is the same
// run byte for byte): the rows each rank wrote, the cuts and every body's cost. Read on as many
// ranks, each gets back its own rows in their order, its costs and the cuts; on another count,
// the shares of the usual split with their costs and no cuts. A record that does not add up is
// refused by every rank.
TEST(CheckpointShare, RanksGetBackTheirRowsCutsAndCosts) {
  const fs::path dir = folder("nbody_cp_share_domain");
  const CheckpointState state = sample_state(11);
  const std::vector<std::uint64_t> cuts{0, 1000, 5000, ~std::uint64_t(0)};
  auto with_domain = [&](int part, CheckpointState& mine) {
    mine.decomposition.cuts = cuts;
    mine.decomposition.cut_level = 7;
    for (std::size_t i = 0; i < mine.particles.size(); ++i)
      mine.decomposition.cost.push_back(double(mine.particles.id[i]) + 0.25 * part);
  };
  const fs::path path = dir / "owned.h5";
  for (const std::string& e : write_in_shares(path, state, 3, with_domain)) EXPECT_EQ(e, "");
  const std::vector<Share> back = read_in_shares(path, 3);
  for (int r = 0; r < 3; ++r) {
    const Share& s = back[std::size_t(r)];
    ASSERT_EQ(s.error, "");
    const ParticleSystem mine = dealt(state.particles, r, 3);
    EXPECT_EQ(s.state.particles.id, mine.id) << "rank " << r << ": its own rows, in order";
    EXPECT_EQ(s.state.decomposition.cuts, cuts);
    EXPECT_EQ(s.state.decomposition.cut_level, 7);
    ASSERT_EQ(s.state.decomposition.cost.size(), mine.size());
    for (std::size_t i = 0; i < mine.size(); ++i)
      EXPECT_EQ(s.state.decomposition.cost[i], double(mine.id[i]) + 0.25 * r);
  }
  for (const Share& s : read_in_shares(path, 2)) {  // another count: the costs, no cuts
    ASSERT_EQ(s.error, "");
    EXPECT_TRUE(s.state.decomposition.cuts.empty());
    EXPECT_EQ(s.state.decomposition.cost.size(), s.state.particles.size());
  }
  // Cuts that do not run from 0 to the end: every rank refuses the file, naming the record.
  const fs::path bad = dir / "bad.h5";
  for (const std::string& e : write_in_shares(bad, state, 3, [&](int part, CheckpointState&mine) {
         with_domain(part, mine);
         mine.decomposition.cuts[1] = 9000;  // after the next cut
       }))
    EXPECT_EQ(e, "");
  for (const Share& s : read_in_shares(bad, 3))
    EXPECT_NE(s.error.find("/Checkpoint/domain_cuts"), std::string::npos) << s.error;
  // A cost that is not a positive number: the rank that reads it says so, and every rank.
  const fs::path negative = dir / "negative.h5";
  for (const std::string& e :
       write_in_shares(negative, state, 3, [&](int part, CheckpointState&mine) {
         with_domain(part, mine);
         if (part == 2) mine.decomposition.cost[1] = -1;
       }))
    EXPECT_EQ(e, "");
  for (const Share& s : read_in_shares(negative, 3))
    EXPECT_NE(s.error.find("/Checkpoint/cost["), std::string::npos) << s.error;
  // A decomposed run without cuts and costs (GPU ranks) keeps each rank's rows alone: read
  // on as many ranks, each still gets its own bodies back (no first migration).
  const fs::path plain = dir / "plain.h5";
  for (const std::string& e : write_in_shares(plain, state, 3)) EXPECT_EQ(e, "");
  const std::vector<Share> plain_back = read_in_shares(plain, 3);
  for (int r = 0; r < 3; ++r) {
    const Share& s = plain_back[std::size_t(r)];
    ASSERT_EQ(s.error, "");
    EXPECT_EQ(s.state.particles.id, dealt(state.particles, r, 3).id) << "rank " << r;
    EXPECT_TRUE(s.state.decomposition.cuts.empty());
    EXPECT_TRUE(s.state.decomposition.cost.empty());
  }
  fs::remove_all(dir);
}

TEST(SnapshotShare, WrittenTogetherHoldsOneProcesssBodies) {
  const fs::path dir = folder("nbody_snap_share_write");
  const ParticleSystem all = sample_state(101).particles;
  std::vector<double> potential(all.size());
  for (std::size_t i = 0; i < all.size(); ++i) potential[i] = -1.0 - double(i);
  for (const auto precision : {SnapshotPrecision::Double, SnapshotPrecision::Float}) {
    SnapshotOptions options;
    options.precision = precision;
    options.acceleration = true;
    write_snapshot(dir / "one.hdf5", all, options, &potential);
    const ParticleSystem one = read_snapshot(dir / "one.hdf5");
    for (const int parts : {2, 3}) {
      SCOPED_TRACE(parts);
      const fs::path p = dir / "shares.hdf5";
      const auto errors =
          testing::run_parts<std::string>(parts, [&](std::shared_ptr<ForceReducer> r) {
            const ParticleSystem mine = dealt(all, r->part(), parts);
            std::vector<double> phi;
            for (std::size_t i = std::size_t(r->part()); i < all.size(); i += std::size_t(parts))
              phi.push_back(potential[i]);
            return test::message_of([&] { write_snapshot_share(p, mine, options, &phi, *r); });
          });
      for (const std::string& e : errors) EXPECT_EQ(e, "");
      const ParticleSystem back = read_snapshot(p);
      ASSERT_EQ(back.size(), one.size());
      std::map<std::uint64_t, std::size_t> at;
      for (std::size_t j = 0; j < one.size(); ++j) at[one.id[j]] = j;
      for (std::size_t i = 0; i < back.size(); ++i) {
        const std::size_t j = at.at(back.id[i]);
        EXPECT_EQ(back.x[i], one.x[j]);
        EXPECT_EQ(back.vy[i], one.vy[j]);
        EXPECT_EQ(back.mass[i], one.mass[j]);
        EXPECT_EQ(back.radius[i], one.radius[j]);
      }
      EXPECT_EQ(back.time, one.time);
    }
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace nbody

#endif  // NBODY_HAVE_HDF5
