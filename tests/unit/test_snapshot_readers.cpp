// Reading snapshots written by other codes, and what the snapshot reader refuses: each file
// here is built dataset by dataset (src/io/hdf5_file.hpp), and each error must name the file
// and the dataset or attribute at fault. The checkpoint reader: test_checkpoint_reader.cpp.
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
#include "io/hdf5_file.hpp"

namespace nbody {
namespace {

namespace fs = std::filesystem;
using hdf5::Group;
using hdf5::Precision;
using testing::HasSubstr;

class SnapshotReaderTest : public test::FolderTest {
 protected:
  SnapshotReaderTest() : FolderTest("h5r") {}

  /// Builds dir/name with `build` filling the root group.
  fs::path make(const std::string& name, const std::function<void(Group& root)>& build) const {
    const fs::path p = dir_ / name;
    hdf5::File f = hdf5::File::create(p, p.string());
    build(f.root());
    f.close();
    return p;
  }
};

using test::error_of;

/// A GADGET-style /Header: counts per type, MassTable, Time 0.25, one file.
void header(Group& root, const std::vector<std::uint32_t>& counts,
            const std::vector<double>& mass_table = std::vector<double>(6, 0.0),
            std::int32_t files = 1) {
  Group h = root.create_group("Header");
  h.write_attribute("NumPart_ThisFile", counts);
  h.write_attribute("NumPart_Total", counts);
  h.write_attribute("MassTable", mass_table);
  h.write_attribute("Time", 0.25);
  h.write_attribute("NumFilesPerSnapshot", files);
}

/// Three valid bodies of type 1 in float32, with or without some datasets.
void type1(Group& root, bool masses = true, bool velocities = true) {
  Group g = root.create_group("PartType1");
  g.write_rows("Coordinates", {1, 2, 3}, {4, 5, 6}, {7, 8, 9}, Precision::Float);
  if (velocities)
    g.write_rows("Velocities", {0.5, 0, 0}, {0, 0.5, 0}, {0, 0, 0.5}, Precision::Float);
  if (masses) g.write_values("Masses", {1, 1, 2}, Precision::Float);
}

const std::vector<std::uint32_t> kThreeOfType1{0, 3, 0, 0, 0, 0};

TEST_F(SnapshotReaderTest, GadgetFileWithTwoTypesMassTableFloat32AndIntIds) {
  const fs::path p = make("gadget.hdf5", [](Group& root) {
    header(root, {2, 3, 0, 0, 0, 0}, {0, 0.5, 0, 0, 0, 0});
    Group gas = root.create_group("PartType0");
    gas.write_rows("Coordinates", {-1, -2}, {0, 0}, {0, 0}, Precision::Float);
    gas.write_rows("Velocities", {0, 0}, {0, 0}, {0, 0}, Precision::Float);
    gas.write_values("Masses", {2, 3}, Precision::Float);
    gas.write_ids("ParticleIDs", {10, 11});
    type1(root, /*masses=*/false);  // masses from MassTable[1]
    Group dm = root.open_group("PartType1");
    dm.write_ids("ParticleIDs", {1, 2, 3});
  });
  const ParticleSystem ps = read_snapshot(p);
  ASSERT_EQ(ps.size(), 5U);
  EXPECT_EQ(ps.x, (std::vector<double>{-1, -2, 1, 2, 3}));  // type order
  EXPECT_EQ(ps.z, (std::vector<double>{0, 0, 7, 8, 9}));
  EXPECT_EQ(ps.vy, (std::vector<double>{0, 0, 0, 0.5, 0}));
  EXPECT_EQ(ps.mass, (std::vector<double>{2, 3, 0.5, 0.5, 0.5}));
  EXPECT_EQ(ps.id, (std::vector<std::uint64_t>{10, 11, 1, 2, 3}));
  EXPECT_EQ(ps.radius, std::vector<double>(5, 0.0));
  EXPECT_EQ(ps.time, 0.25);
  EXPECT_EQ(ps.dim, 3);  // no Dimension attribute
}

TEST_F(SnapshotReaderTest, WithoutParticleIdsBodiesAreNumberedOneToN) {
  const fs::path p = make("noids.hdf5", [](Group& root) {
    header(root, kThreeOfType1);
    type1(root);
    (void)root.create_group("PartType4");  // an empty group of a type with no particles
  });
  EXPECT_EQ(read_snapshot(p).id, (std::vector<std::uint64_t>{1, 2, 3}));
}

TEST_F(SnapshotReaderTest, BadFilesNameTheDatasetOrAttribute) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  struct Case {
    const char* name;
    std::function<void(Group&)> build;
    std::string expected;
  };
  const std::vector<Case> cases{
      {"noheader", [](Group& root) { type1(root); }, "/Header is missing"},
      {"rows",
       [](Group& root) {
         header(root, kThreeOfType1);
         type1(root, false);
         root.open_group("PartType1").write_values("Masses", {1, 1, 1, 1}, Precision::Double);
       },
       "/PartType1/Masses has 4 rows, /PartType1/Coordinates has 3"},
      {"count",
       [](Group& root) {
         header(root, {0, 4, 0, 0, 0, 0});
         type1(root);
       },
       "/PartType1/Coordinates has 3 rows, /Header/NumPart_ThisFile[1] is 4"},
      {"shape",
       [](Group& root) {
         header(root, kThreeOfType1);
         root.create_group("PartType1").write_values("Coordinates", {1, 2, 3}, Precision::Float);
       },
       "/PartType1/Coordinates has shape (3), expected (3, 3)"},
      {"nan",
       [nan](Group& root) {
         header(root, kThreeOfType1);
         type1(root, true, false);
         root.open_group("PartType1")
             .write_rows("Velocities", {0, 0, 0}, {0, 0, 0}, {0, nan, 0}, Precision::Double);
       },
       "/PartType1/Velocities[1][2]: must be finite (got nan)"},
      {"negative",
       [](Group& root) {
         header(root, kThreeOfType1);
         type1(root, false);
         root.open_group("PartType1").write_values("Masses", {1, -1, 1}, Precision::Double);
       },
       "/PartType1/Masses[1]: must be finite and >= 0 (got -1)"},
      {"novelocities",
       [](Group& root) {
         header(root, kThreeOfType1);
         type1(root, true, false);
       },
       "/PartType1/Velocities is missing"},
      {"nomasses",
       [](Group& root) {
         header(root, kThreeOfType1);
         type1(root, false);
       },
       "/PartType1/Masses is missing and /Header/MassTable[1] is 0"},
      {"multifile",
       [](Group& root) {
         header(root, kThreeOfType1, std::vector<double>(6, 0.0), 2);
         type1(root);
       },
       "/Header/NumFilesPerSnapshot is 2: multi-file snapshots are not supported"},
      {"zeromass",
       [](Group& root) {
         header(root, kThreeOfType1);
         type1(root, false);
         root.open_group("PartType1").write_values("Masses", {1, 0, 1}, Precision::Double);
       },
       "/PartType1/Masses[2]: a body with mass after the test particles (mass 0 from "
       "/PartType1/Masses[1]): test particles come last"},
      {"minuszeromass",
       [](Group& root) {
         header(root, kThreeOfType1);
         type1(root, false);
         root.open_group("PartType1").write_values("Masses", {-0.0, 0, -0.0}, Precision::Float);
       },
       "no body has mass: test particles need at least one body with mass"},
      {"halfcount",
       [](Group& root) {
         Group h = root.create_group("Header");
         h.write_attribute("NumPart_ThisFile", std::vector<double>{0, 4.5, 0, 0, 0, 0});
         h.write_attribute("Time", 0.0);
         type1(root);
       },
       "/Header/NumPart_ThisFile[1]: must be a non-negative integer (got 4.5)"},
      {"nantime",
       [nan](Group& root) {
         Group h = root.create_group("Header");
         h.write_attribute("NumPart_ThisFile", kThreeOfType1);
         h.write_attribute("Time", nan);
         type1(root);
       },
       "/Header/Time: must be finite (got nan)"},
      {"dimension",
       [](Group& root) {
         header(root, kThreeOfType1);
         root.open_group("Header").write_attribute("Dimension", std::int32_t{4});
         type1(root);
       },
       "/Header/Dimension: must be 2 or 3 (got 4)"},
      {"nobodies",
       [](Group& root) {
         header(root, {0, 0, 0, 0, 0, 0});
         (void)root.create_group("PartType1");
       },
       "/Header/NumPart_ThisFile: the snapshot holds no bodies (every count is 0) (got 0)"},
      {"huge",  // 2^40 bodies claimed through the high words: refused before any allocation
       [](Group& root) {
         header(root, kThreeOfType1);
         root.open_group("Header").write_attribute("NumPart_Total_HighWord",
                                                   std::vector<std::uint32_t>{0, 256, 0, 0, 0, 0});
         type1(root);
       },
       "/Header/NumPart_ThisFile: 1099511627779 values need 193514046489104 bytes of memory"},
      {"nogroup", [](Group& root) { header(root, kThreeOfType1); },
       "/PartType1 is missing, but /Header/NumPart_ThisFile[1] is 3"},
      {"zeroid",
       [](Group& root) {
         header(root, kThreeOfType1);
         type1(root);
         root.open_group("PartType1").write_ids("ParticleIDs", {0, 1, 2});
       },
       "/PartType1/ParticleIDs[0] is 0 (ids must be >= 1)"},
      {"dupid",
       [](Group& root) {
         header(root, kThreeOfType1);
         type1(root);
         root.open_group("PartType1").write_ids("ParticleIDs", {2, 1, 2});
       },
       "ParticleIDs: id 2 is used twice (bodies 0 and 2"},
      {"floatids",
       [](Group& root) {
         header(root, kThreeOfType1);
         type1(root);
         root.open_group("PartType1").write_values("ParticleIDs", {1, 2, 3}, Precision::Double);
       },
       "/PartType1/ParticleIDs does not hold integers"},
      {"planar",
       [](Group& root) {
         header(root, kThreeOfType1);
         root.open_group("Header").write_attribute("Dimension", std::int32_t{2});
         type1(root);
       },
       "/PartType1/Coordinates[0][2] is 7, but /Header/Dimension is 2"},
      {"notime",
       [](Group& root) {
         Group h = root.create_group("Header");
         h.write_attribute("NumPart_ThisFile", kThreeOfType1);
         type1(root);
       },
       "/Header/Time is missing"},
  };
  for (const Case& c : cases) {
    const fs::path p = make(std::string(c.name) + ".hdf5", c.build);
    EXPECT_THAT(error_of([&] { (void)read_snapshot(p); }),
                HasSubstr(p.string() + ": " + c.expected))
        << c.name;
  }
}

}  // namespace
}  // namespace nbody

#endif  // NBODY_HAVE_HDF5
