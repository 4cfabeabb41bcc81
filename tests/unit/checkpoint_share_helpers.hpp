#pragma once
// Shared by the tests of checkpoints written and read in shares (test_checkpoint_share.cpp,
// test_checkpoint_share_errors.cpp): a folder per test, a run's state, bodies dealt to P
// thread ranks, and the writes and reads of every rank.
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "nbody/gravity.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/snapshot.hpp"
#include "test_helpers.hpp"
#include "thread_ranks.hpp"

#if NBODY_HAVE_HDF5

namespace nbody::testing_checkpoint_share {

/// A folder of its own for each test (no temporaries of other tests in it).
inline std::filesystem::path folder(const std::string& name) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / (name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

/// A state as a run leaves it: accelerations valid, every scalar set.
inline CheckpointState sample_state(std::size_t n) {
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
inline ParticleSystem dealt(const ParticleSystem& all, int r, int parts) {
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

/// write_checkpoint_share on `parts` thread ranks, each holding dealt(); each rank's error.
inline std::vector<std::string> write_in_shares(
    const std::filesystem::path& path, const CheckpointState& state, int parts,
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

inline std::vector<Share> read_in_shares(const std::filesystem::path& path, int parts) {
  return testing::run_parts<Share>(parts, [&](std::shared_ptr<ForceReducer> r) {
    Share s;
    s.error = test::message_of([&] { s.state = read_checkpoint_share(path, *r, s.total); });
    return s;
  });
}

}  // namespace nbody::testing_checkpoint_share

#endif  // NBODY_HAVE_HDF5
