// Checkpoints and snapshots of a decomposed run, written at once by every rank into one file
// and read back in shares (issue 36, item 3): whatever the number of ranks that wrote it
// (P = 1..4, thread ranks) the file holds one process's bodies (by id, every bit) and
// attributes, in the ranks' order; read whole or in shares on Q = 1..4 ranks it gives them
// back, every id once; what any rank refuses every rank refuses with the whole reader's
// message; a failed write leaves no file under the name, nor a temporary.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "nbody/error.hpp"
#include "nbody/gravity.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/snapshot.hpp"
#include "test_helpers.hpp"
#include "thread_ranks.hpp"

#if NBODY_HAVE_HDF5

namespace nbody {
namespace {

namespace fs = std::filesystem;

/// A folder of its own for each test (no temporaries of other tests in it).
fs::path folder(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / (name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

/// A state as a run leaves it: accelerations valid, every scalar set.
CheckpointState sample_state(std::size_t n) {
  CheckpointState s;
  s.particles = generate({.model = "plummer", .n = n, .seed = 5, .radius = 0.01});
  ParticleSystem& ps = s.particles;
  for (std::size_t i = 0; i < ps.size(); ++i) {
    ps.ax[i] = std::sin(double(i));
    ps.ay[i] = -1.0 / double(i + 1);
    ps.az[i] = 1e-300 * double(i);
  }
  ps.time = 0.375;
  ps.set_accelerations_valid();
  s.step = 77;
  s.initial_energy = -0.2512345;
  s.collisions.stages = 3;
  s.next_snapshot = 4;
  s.next_snapshot_time = 0.5;
  s.snapshot_origin = 0.0;
  s.parameters = "dt = 0.005\n";
  return s;
}

/// Rank r of P holds bodies r, r + P, r + 2P, ...: the file's order (by rank) is not the ids'.
ParticleSystem dealt(const ParticleSystem& all, int r, int parts) {
  ParticleSystem mine;
  mine.dim = all.dim;
  mine.time = all.time;
  for (std::size_t i = std::size_t(r); i < all.size(); i += std::size_t(parts)) {
    mine.add(Body{{all.x[i], all.y[i], all.z[i]},
                  {all.vx[i], all.vy[i], all.vz[i]},
                  all.mass[i],
                  all.radius[i],
                  all.id[i]});
    mine.ax.back() = all.ax[i], mine.ay.back() = all.ay[i], mine.az.back() = all.az[i];
  }
  if (all.accelerations_valid()) mine.set_accelerations_valid();
  return mine;
}

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

/// write_checkpoint_share on `parts` thread ranks, each holding dealt(); each rank's error.
std::vector<std::string> write_in_shares(
    const fs::path& path, const CheckpointState& state, int parts,
    const std::function<void(int, CheckpointState&)>& edit = nullptr) {
  return testing::run_parts<std::string>(parts, [&](std::shared_ptr<ForceReducer> r) {
    CheckpointState mine = state;
    mine.particles = dealt(state.particles, r->part(), parts);
    if (edit) edit(r->part(), mine);
    return test::message_of([&] { write_checkpoint_share(path, mine, mine.particles, *r); });
  });
}

struct Share {
  CheckpointState state;
  std::size_t total = 0;
  std::string error;
};

std::vector<Share> read_in_shares(const fs::path& path, int parts) {
  return testing::run_parts<Share>(parts, [&](std::shared_ptr<ForceReducer> r) {
    Share s;
    s.error = test::message_of([&] { s.state = read_checkpoint_share(path, *r, s.total); });
    return s;
  });
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

/// Every rank's message is the whole file's reader's.
void expect_every_rank_says(const fs::path& p, int parts, const std::string& whole) {
  for (const Share& s : read_in_shares(p, parts)) EXPECT_EQ(s.error, whole);
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

TEST(CheckpointShare, EveryRankRefusesWhatOneRankFinds) {
  const fs::path dir = folder("nbody_cp_share_bad");
  CheckpointState state = sample_state(7);
  // On 3 ranks the shares are rows [0,2) [2,4) [4,7): each problem below is in the last.
  auto refused = [&](const std::string& name, const std::function<void(CheckpointState&)>& edit,
                     const std::string& expected) {
    SCOPED_TRACE(name);
    CheckpointState bad = state;
    edit(bad);
    const fs::path p = dir / (name + ".h5");
    write_checkpoint(p, bad);  // the writer checks sizes, not values: a damaged file
    const std::string whole = test::error_of([&] { (void)read_checkpoint(p); });
    EXPECT_NE(whole.find(p.string() + ": " + expected), std::string::npos) << whole;
    expect_every_rank_says(p, 3, whole);
    expect_every_rank_says(p, 2, whole);
  };
  refused(
      "mass", [](CheckpointState& s) { s.particles.mass[5] = 0; },
      "/Checkpoint/mass[5]: must be finite and > 0 (got 0)");
  // Two problems in two shares: the whole reader meets x (the first array) first.
  refused(
      "two", [](CheckpointState& s) { s.particles.mass[0] = -1, s.particles.x[6] = NAN; },
      "/PartType1/Coordinates[6, 0]: must be finite (got nan)");
  refused(
      "id", [](CheckpointState& s) { s.particles.id = {1, 9, 3, 4, 5, 6, 9}; },
      "/Checkpoint/id[6]: is used twice (also by body 1) (got 9)");
  refused(
      "acceleration", [](CheckpointState& s) { s.particles.az[4] = INFINITY; },
      "/Checkpoint/az[4]: must be finite (got inf)");
  refused(
      "planar",
      [](CheckpointState& s) {
        s.particles.dim = 2;
        for (std::size_t i = 0; i < 7; ++i) s.particles.z[i] = s.particles.vz[i] = 0;
        s.particles.vz[6] = 0.5;
      },
      "/PartType1/Velocities[6, 2]: must be 0 in a planar (dim 2) checkpoint (got 0.5)");
  // IAS15's state is read whole: IAS15 never runs decomposed.
  CheckpointState ias15 = state;
  ias15.integrator.values.assign(48 * 7, 0.0);
  ias15.integrator.next_dt = 0.01;
  write_checkpoint(dir / "ias15.h5", ias15);
  EXPECT_EQ(read_checkpoint(dir / "ias15.h5").integrator.values.size(), 48u * 7);
  for (const Share& s : read_in_shares(dir / "ias15.h5", 2))
    EXPECT_NE(s.error.find("/Checkpoint/integrator_state is IAS15's state, which one process "
                           "reads whole"),
              std::string::npos)
        << s.error;
  for (const std::string& e : write_in_shares(dir / "ias15_shares.h5", ias15, 2))
    EXPECT_NE(e.find("IAS15's state is written by one process"), std::string::npos) << e;
  EXPECT_FALSE(fs::exists(dir / "ias15_shares.h5"));
  fs::remove_all(dir);
}

/// The names in `dir` (temporaries included).
std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(CheckpointShare, AFailedWriteOnOneRankLeavesNoFileAndEveryRankSaysSo) {
  const fs::path dir = folder("nbody_cp_share_fail");
  const CheckpointState state = sample_state(50);
  // An old checkpoint under the name stays as it was.
  const fs::path p = dir / "checkpoint.h5";
  write_checkpoint(p, sample_state(3));
  const auto old_size = fs::file_size(p);
  // The last rank's bodies are malformed (a missing radius): it finds it, every rank throws.
  const auto errors = write_in_shares(p, state, 3, [](int part, CheckpointState& s) {
    if (part == 2) s.particles.radius.pop_back();
  });
  for (const std::string& e : errors) {
    EXPECT_EQ(e, errors[0]);
    EXPECT_NE(e.find(p.string() + ": cannot write checkpoint (radius has"), std::string::npos) << e;
  }
  EXPECT_EQ(fs::file_size(p), old_size);
  EXPECT_EQ(names_in(dir), std::vector<std::string>{"checkpoint.h5"});
  // Rank 0 cannot create the file (no such folder): the other ranks do not wait for it.
  const fs::path nowhere = dir / "missing" / "checkpoint.h5";
  for (const std::string& e : write_in_shares(nowhere, state, 3))
    EXPECT_NE(e.find("does not exist"), std::string::npos) << e;
  EXPECT_EQ(names_in(dir), std::vector<std::string>{"checkpoint.h5"});
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
