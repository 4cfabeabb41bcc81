// What the checkpoint reader refuses, each file damaged through the HDF5 API, and each
// error naming the file and the dataset or attribute at fault; and the checkpoints of the
// first layout (version 1), still read.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "nbody/error.hpp"
#include "nbody/snapshot.hpp"
#include "test_helpers.hpp"

#if NBODY_HAVE_HDF5
#include <hdf5.h>

namespace nbody {
namespace {

namespace fs = std::filesystem;
using test::error_of;
using testing::HasSubstr;

class CheckpointReaderTest : public test::FolderTest {
 protected:
  CheckpointReaderTest() : FolderTest("cpr") {}
};

/// A copy of checkpoint `good` damaged through the HDF5 API, and the message it must give.
struct Damage {
  const char* name;
  std::function<void(hid_t checkpoint_group)> damage;
  std::string expected;
};

void expect_refused(const fs::path& good, const std::vector<Damage>& cases) {
  for (const Damage& c : cases) {
    const fs::path p = good.parent_path() / (std::string(c.name) + ".h5");
    fs::copy_file(good, p);
    const hid_t file = H5Fopen(p.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    const hid_t group = H5Gopen2(file, "Checkpoint", H5P_DEFAULT);
    c.damage(group);
    H5Gclose(group);
    H5Fclose(file);
    EXPECT_THAT(error_of([&] { (void)read_checkpoint(p); }),
                HasSubstr(p.string() + ": " + c.expected))
        << c.name;
  }
}

TEST_F(CheckpointReaderTest, CheckpointReaderNamesWhatIsMissingOrInconsistent) {
  CheckpointState state;
  state.particles = test::random_system(4, 1);
  const fs::path good = dir_ / "good.h5";
  write_checkpoint(good, state);
  const std::vector<Damage> cases{
      {"nostep", [](hid_t g) { H5Adelete(g, "step"); }, "/Checkpoint/step is missing"},
      {"noparameters", [](hid_t g) { H5Adelete(g, "parameters"); },
       "/Checkpoint/parameters is missing"},
      // Version 2: the positions and velocities are the snapshot view's (an absolute path).
      {"novelocities", [](hid_t g) { H5Ldelete(g, "/PartType1/Velocities", H5P_DEFAULT); },
       "/PartType1/Velocities is missing"},
      {"shortax",
       [](hid_t g) {
         H5Ldelete(g, "ax", H5P_DEFAULT);
         const hsize_t three = 3;
         const hid_t space = H5Screate_simple(1, &three, nullptr);
         const hid_t set =
             H5Dcreate2(g, "ax", H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
         H5Dclose(set);
         H5Sclose(space);
       },
       "/Checkpoint/ax has shape (3), /Checkpoint/mass has 4 values"},
      {"version",
       [](hid_t g) {
         const std::int32_t three = 3;
         const hid_t attr = H5Aopen(g, "format_version", H5P_DEFAULT);
         H5Awrite(attr, H5T_NATIVE_INT32, &three);
         H5Aclose(attr);
       },
       "/Checkpoint/format_version is 3; this nbody reads versions 1 and 2"},
  };
  expect_refused(good, cases);
}

/// Column c of the N x 3 float64 dataset `path` as a new 1-D dataset `name` of group g.
void copy_column(hid_t g, const char* path, int c, const char* name) {
  const hid_t set = H5Dopen2(g, path, H5P_DEFAULT);
  const hid_t space = H5Dget_space(set);
  std::vector<double> rows(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space)));
  H5Dread(set, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows.data());
  H5Sclose(space), H5Dclose(set);
  const hsize_t n = rows.size() / 3;
  std::vector<double> column(n);
  for (hsize_t i = 0; i < n; ++i) column[i] = rows[3 * i + std::size_t(c)];
  const hid_t out_space = H5Screate_simple(1, &n, nullptr);
  const hid_t out =
      H5Dcreate2(g, name, H5T_IEEE_F64LE, out_space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5Dwrite(out, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, column.data());
  H5Dclose(out), H5Sclose(out_space);
}

// Checkpoints written before version 2 kept x y z vx vy vz (and the radii) under /Checkpoint
// as well: they are still read, the same bits.
TEST_F(CheckpointReaderTest, CheckpointOfVersionOneIsStillRead) {
  CheckpointState state;
  state.particles = test::random_system(5, 3);
  state.particles.assign_sequential_ids();
  const fs::path path = dir_ / "v1.h5";
  write_checkpoint(path, state);
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  const hid_t g = H5Gopen2(file, "Checkpoint", H5P_DEFAULT);
  const char* names[6] = {"x", "y", "z", "vx", "vy", "vz"};
  for (int k = 0; k < 6; ++k)
    copy_column(g, k < 3 ? "/PartType1/Coordinates" : "/PartType1/Velocities", k % 3, names[k]);
  const hsize_t n = 5;
  const std::vector<double> zeros(n, 0.0);
  const hid_t space = H5Screate_simple(1, &n, nullptr);
  const hid_t radius =
      H5Dcreate2(g, "radius", H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5Dwrite(radius, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, zeros.data());
  H5Dclose(radius), H5Sclose(space);
  const std::int32_t one = 1;
  const hid_t attr = H5Aopen(g, "format_version", H5P_DEFAULT);
  H5Awrite(attr, H5T_NATIVE_INT32, &one);
  H5Aclose(attr);
  // The view's positions changed: version 1 reads /Checkpoint's, not the view's.
  const double moved[3] = {9, 9, 9};
  const hid_t view = H5Dopen2(file, "/PartType1/Coordinates", H5P_DEFAULT);
  const hsize_t start[2] = {0, 0}, count[2] = {1, 3};
  const hid_t file_space = H5Dget_space(view);
  H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, nullptr, count, nullptr);
  const hid_t memory = H5Screate_simple(2, count, nullptr);
  H5Dwrite(view, H5T_NATIVE_DOUBLE, memory, file_space, H5P_DEFAULT, moved);
  H5Sclose(memory), H5Sclose(file_space), H5Dclose(view);
  H5Gclose(g), H5Fclose(file);
  const CheckpointState read = read_checkpoint(path);
  ASSERT_EQ(read.particles.size(), 5u);
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(read.particles.x[i], state.particles.x[i]) << i;
    EXPECT_EQ(read.particles.vz[i], state.particles.vz[i]) << i;
    EXPECT_EQ(read.particles.mass[i], state.particles.mass[i]) << i;
    EXPECT_EQ(read.particles.radius[i], 0.0) << i;
  }
}

/// Overwrites element `index` of the float64 dataset `name` of group g.
void set_element(hid_t g, const char* name, std::size_t index, double value) {
  const hid_t set = H5Dopen2(g, name, H5P_DEFAULT);
  const hid_t space = H5Dget_space(set);
  std::vector<double> values(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space)));
  H5Dread(set, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data());
  values.at(index) = value;
  H5Dwrite(set, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data());
  H5Sclose(space), H5Dclose(set);
}

/// Replaces attribute `name` of g by a float64 one (an integer one would round 2.5 to 2).
void set_attribute(hid_t g, const char* name, double value) {
  H5Adelete(g, name);
  const hid_t space = H5Screate(H5S_SCALAR);
  const hid_t attr = H5Acreate2(g, name, H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(attr, H5T_NATIVE_DOUBLE, &value);
  H5Aclose(attr), H5Sclose(space);
}

TEST_F(CheckpointReaderTest, CheckpointReaderRefusesWhatNoRunHolds) {
  // What `nbody run --restart` would otherwise run on (issue 32), named to the index.
  CheckpointState state;
  state.particles = test::random_system(4, 1);
  state.particles.assign_sequential_ids();
  state.particles.radius.assign(4, 0.01);       // a radius dataset to damage
  state.integrator.values.assign(48 * 4, 0.5);  // IAS15's saved state
  state.integrator.next_dt = 0.01;
  const fs::path good = dir_ / "good.h5";
  write_checkpoint(good, state);
  ASSERT_EQ(read_checkpoint(good).integrator.values.size(), 48U * 4);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<Damage> cases{
      // Version 2: the positions and velocities are the view's rows (element 3 row + column).
      {"nanx", [nan](hid_t g) { set_element(g, "/PartType1/Coordinates", 3 * 2 + 0, nan); },
       "/PartType1/Coordinates[2, 0]: must be finite (got nan)"},
      {"infvz", [inf](hid_t g) { set_element(g, "/PartType1/Velocities", 3 * 0 + 2, -inf); },
       "/PartType1/Velocities[0, 2]: must be finite (got -inf)"},
      {"zeromass", [](hid_t g) { set_element(g, "mass", 1, 0.0); },
       "/Checkpoint/mass[1]: must be finite and > 0 (got 0)"},
      {"negativeradius", [](hid_t g) { set_element(g, "radius", 3, -1.0); },
       "/Checkpoint/radius[3]: must be finite and >= 0 (got -1)"},
      {"repeatedid",
       [](hid_t g) {
         const std::uint64_t ids[4] = {1, 2, 3, 2};
         const hid_t set = H5Dopen2(g, "id", H5P_DEFAULT);
         H5Dwrite(set, H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, ids);
         H5Dclose(set);
       },
       "/Checkpoint/id[3]: is used twice (also by body 1) (got 2)"},
      {"nantime", [nan](hid_t g) { set_attribute(g, "time", nan); },
       "/Checkpoint/time: must be finite (got nan)"},
      {"ias15", [nan](hid_t g) { set_element(g, "integrator_state", 100, nan); },
       "/Checkpoint/integrator_state[100]: must be finite (got nan)"},
      {"ias15dt", [](hid_t g) { set_attribute(g, "integrator_next_dt", 0.0); },
       "/Checkpoint/integrator_next_dt: must be finite and > 0 (got 0)"},
      {"energy", [inf](hid_t g) { set_attribute(g, "initial_energy", inf); },
       "/Checkpoint/initial_energy: must be finite (or nan: not computed) (got inf)"},
      {"snapshottime", [nan](hid_t g) { set_attribute(g, "next_snapshot_time", nan); },
       "/Checkpoint/next_snapshot_time: must be finite (got nan)"},
      {"halfstep", [](hid_t g) { set_attribute(g, "step", 2.5); },
       "/Checkpoint/step: must be a non-negative integer (got 2.5)"},
      {"dim", [](hid_t g) { set_attribute(g, "dim", 4); },
       "/Checkpoint/dim: must be one of 2, 3 (got 4)"},
      {"version", [nan](hid_t g) { set_attribute(g, "format_version", nan); },
       "/Checkpoint/format_version is nan; this nbody reads versions 1 and 2"},
  };
  expect_refused(good, cases);
}

}  // namespace
}  // namespace nbody

#endif  // NBODY_HAVE_HDF5
