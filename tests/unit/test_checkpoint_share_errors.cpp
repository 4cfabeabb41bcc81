// Checkpoints of a decomposed run that cannot be read or written in shares: what any rank
// refuses every rank refuses with the whole reader's message; a failed write on one rank
// leaves no file under the name, nor a temporary (issue 36, item 3).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "checkpoint_share_helpers.hpp"
#include "nbody/snapshot.hpp"
#include "test_helpers.hpp"

#if NBODY_HAVE_HDF5

namespace nbody {
namespace {

namespace fs = std::filesystem;
using namespace testing_checkpoint_share;  // the helpers of this suite's files

/// Every rank's message is the whole file's reader's.
void expect_every_rank_says(const fs::path& p, int parts, const std::string& whole) {
  for (const Share& s : read_in_shares(p, parts)) EXPECT_EQ(s.error, whole);
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

}  // namespace
}  // namespace nbody

#endif  // NBODY_HAVE_HDF5
