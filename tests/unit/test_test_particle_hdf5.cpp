// Test particles in HDF5 files: snapshots keep them as PartType3 with /Header/TestParticleType,
// checkpoints as /Checkpoint's NumActive and TestParticleType. Round trips keep every bit,
// n_active and the type; older files read with every body active; bad ones are refused.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "nbody/snapshot.hpp"
#include "test_helpers.hpp"
#include "test_particle_io_helpers.hpp"
#include "thread_ranks.hpp"

#if NBODY_HAVE_HDF5
#include <hdf5.h>

#include "io/hdf5_file.hpp"
#endif

namespace nbody {
namespace {

#if NBODY_HAVE_HDF5

namespace fs = std::filesystem;
using test::error_of;
using ::testing::HasSubstr;
using testing_test_particle_io::expect_same_bodies;
using testing_test_particle_io::TestParticleIoTest;
using testing_test_particle_io::with_tests;

std::vector<std::uint64_t> header_counts(const fs::path& p, const char* name) {
  const hdf5::File f = hdf5::File::open(p);
  return f.root().open_group("Header").read_attribute_uint64(name);
}

std::uint64_t rows_of(const fs::path& p, const std::string& dataset) {
  const hdf5::File f = hdf5::File::open(p);
  const auto slash = dataset.find('/');
  return f.root().open_group(dataset.substr(0, slash)).dataset_shape(dataset.substr(slash + 1))[0];
}

/// Opens p's group `group` with the C API for `edit` (attributes changed or removed).
void edit_group(const fs::path& p, const char* group, const std::function<void(hid_t)>& edit) {
  const hid_t f = H5Fopen(p.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  const hid_t g = H5Gopen2(f, group, H5P_DEFAULT);
  edit(g);
  H5Gclose(g);
  H5Fclose(f);
}

void set_attribute(hid_t g, const char* name, double value) {
  if (H5Aexists(g, name) > 0) H5Adelete(g, name);
  const hid_t space = H5Screate(H5S_SCALAR);
  const hid_t attr = H5Acreate2(g, name, H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(attr, H5T_NATIVE_DOUBLE, &value);
  H5Aclose(attr), H5Sclose(space);
}

void set_mass(const fs::path& p, const char* dataset, std::size_t row, double value) {
  const hid_t f = H5Fopen(p.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  const hid_t set = H5Dopen2(f, dataset, H5P_DEFAULT);
  const hid_t space = H5Dget_space(set);
  std::vector<double> v(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space)));
  H5Dread(set, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data());
  v.at(row) = value;
  H5Dwrite(set, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data());
  H5Sclose(space), H5Dclose(set), H5Fclose(f);
}

// ---- Snapshots -----------------------------------------------------------------------

TEST_F(TestParticleIoTest, SnapshotKeepsTestParticlesInPartType3) {
  for (const int type : {0, 1}) {
    SCOPED_TRACE(type);
    // Type 0 with test particles of mass, type 1 massless ones (its test particles pull).
    const ParticleSystem ps = with_tests(10, 4, type == 0 ? 0.25 : 0.0, type);
    const fs::path p = file("snap" + std::to_string(type) + ".hdf5");
    const std::vector<double> potential{-1, -2, -3, -4, -5, -6, -7, -8, -9, -10};
    write_snapshot(p, ps, SnapshotOptions{.acceleration = true}, &potential);
    expect_same_bodies(ps, read_snapshot(p));
    // PartType1 holds the active bodies only, PartType3 the test particles, each counted.
    EXPECT_EQ(header_counts(p, "NumPart_ThisFile"), (std::vector<std::uint64_t>{0, 6, 0, 4, 0, 0}));
    EXPECT_EQ(header_counts(p, "NumPart_Total"), (std::vector<std::uint64_t>{0, 6, 0, 4, 0, 0}));
    EXPECT_EQ(rows_of(p, "PartType1/Masses"), 6U);
    EXPECT_EQ(rows_of(p, "PartType1/Coordinates"), 6U);
    EXPECT_EQ(rows_of(p, "PartType3/Coordinates"), 4U);
    EXPECT_EQ(rows_of(p, "PartType3/Accelerations"), 4U);
    EXPECT_EQ(rows_of(p, "PartType3/Radii"), 4U);
    const hdf5::File f = hdf5::File::open(p);
    EXPECT_EQ(f.root().open_group("Header").read_attribute_double("TestParticleType"), type);
    EXPECT_EQ(f.root().open_group("PartType1").read_doubles("Potential"),
              std::vector<double>(potential.begin(), potential.begin() + 6));
    EXPECT_EQ(f.root().open_group("PartType3").read_doubles("Potential"),
              std::vector<double>(potential.begin() + 6, potential.end()));
    EXPECT_EQ(f.root().open_group("PartType3").read_doubles("Accelerations")[0], ps.ax[6]);
  }
  // Ids a snapshot cannot hold: numbered 1..N over PartType1 then PartType3.
  ParticleSystem odd = with_tests(5, 2, 0.0, 0);
  odd.id.assign(5, 0);
  write_snapshot(file("odd.hdf5"), odd, {});
  EXPECT_EQ(read_snapshot(file("odd.hdf5")).id, (std::vector<std::uint64_t>{1, 2, 3, 4, 5}));
  // Without test particles the file is as before: no PartType3, no TestParticleType.
  write_snapshot(file("plain.hdf5"), test::random_system(3, 1), {});
  const hdf5::File plain = hdf5::File::open(file("plain.hdf5"));
  EXPECT_FALSE(plain.root().has("PartType3"));
  EXPECT_FALSE(plain.root().open_group("Header").has_attribute("TestParticleType"));
}

TEST_F(TestParticleIoTest, SnapshotReadsMasslessBodiesAndOlderFiles) {
  // Massless bodies in PartType1 (as other tools write them): the test particles.
  ParticleSystem ps = with_tests(6, 2, 0.0, 0);
  ps.n_active = ParticleSystem::kAllActive;
  write_snapshot(file("massless.hdf5"), ps, {});
  EXPECT_EQ(rows_of(file("massless.hdf5"), "PartType1/Masses"), 6U);
  const ParticleSystem back = read_snapshot(file("massless.hdf5"));
  EXPECT_EQ(back.n_active, 4U);
  EXPECT_EQ(back.test_particle_type, 0);
  // A GADGET file's own PartType3 (no TestParticleType): bodies like any other, all active.
  const fs::path gadget = file("gadget.hdf5");
  write_snapshot(gadget, with_tests(6, 2, 0.5, 1), {});
  edit_group(gadget, "Header", [](hid_t h) { H5Adelete(h, "TestParticleType"); });
  set_mass(gadget, "PartType3/Masses", 1, 0.5);  // type 3 with mass all through
  const ParticleSystem old = read_snapshot(gadget);
  EXPECT_EQ(old.size(), 6U);
  EXPECT_FALSE(old.has_test_particles());
}

TEST_F(TestParticleIoTest, SnapshotRefusesBadTestParticlesNamingThePlace) {
  const fs::path good = file("good.hdf5");
  write_snapshot(good, with_tests(6, 2, 0.0, 1), {});
  auto damaged = [&](const std::string& name, const std::function<void(const fs::path&)>& edit) {
    const fs::path p = file(name);
    fs::copy_file(good, p);
    edit(p);
    return error_of([&] { (void)read_snapshot(p); });
  };
  EXPECT_EQ(damaged("type.hdf5",
                    [](const fs::path& p) {
                      edit_group(p, "Header",
                                 [](hid_t h) { set_attribute(h, "TestParticleType", 2); });
                    }),
            file("type.hdf5").string() + ": /Header/TestParticleType: must be 0 or 1 (got 2)");
  EXPECT_EQ(
      damaged("active.hdf5", [](const fs::path& p) { set_mass(p, "PartType1/Masses", 3, 0.0); }),
      file("active.hdf5").string() + ": /PartType1/Masses[3]: must be finite and > 0 (got 0)");
  EXPECT_EQ(
      damaged("negative.hdf5", [](const fs::path& p) { set_mass(p, "PartType3/Masses", 1, -1.0); }),
      file("negative.hdf5").string() + ": /PartType3/Masses[1]: must be finite and >= 0 (got -1)");
}

constexpr const char* kNotInShares =
    ": test particles: read by one process (the decomposed read does not take them yet)";

TEST_F(TestParticleIoTest, DecomposedReadsAndWritesRefuseTestParticles) {
  const ParticleSystem ps = with_tests(8, 3, 0.0, 0);
  write_snapshot(file("s.hdf5"), ps, {});
  CheckpointState state;
  state.particles = ps;
  write_checkpoint(file("c.h5"), state);
  struct Said {
    std::string snapshot, checkpoint, snapshot_write, checkpoint_write;
  };
  const auto said = testing::run_parts<Said>(2, [&](std::shared_ptr<ForceReducer> r) {
    Said s;
    std::size_t total = 0;
    s.snapshot = error_of([&] { (void)read_snapshot_share(file("s.hdf5"), *r, total); });
    s.checkpoint = error_of([&] { (void)read_checkpoint_share(file("c.h5"), *r, total); });
    ParticleSystem part = ps;  // rank 1's bodies have test particles, rank 0's none
    if (r->part() == 0) part.n_active = ParticleSystem::kAllActive;
    s.snapshot_write =
        error_of([&] { write_snapshot_share(file("w.hdf5"), part, {}, nullptr, *r); });
    CheckpointState mine_state;
    mine_state.particles = part;
    s.checkpoint_write = error_of(
        [&] { write_checkpoint_share(file("w.h5"), mine_state, mine_state.particles, *r); });
    return s;
  });
  for (const Said& s : said) {
    EXPECT_EQ(s.snapshot, file("s.hdf5").string() + kNotInShares);
    EXPECT_EQ(s.checkpoint, file("c.h5").string() + kNotInShares);
    EXPECT_THAT(s.snapshot_write, HasSubstr("cannot write snapshot (test particles: written by "
                                            "one process"));
    EXPECT_THAT(s.checkpoint_write, HasSubstr("cannot write checkpoint (test particles: written "
                                              "by one process"));
  }
  EXPECT_FALSE(fs::exists(file("w.hdf5")));
  EXPECT_FALSE(fs::exists(file("w.h5")));
}

// ---- Checkpoints -----------------------------------------------------------------------

TEST_F(TestParticleIoTest, CheckpointKeepsNumActiveAndTheType) {
  for (const int type : {0, 1}) {
    SCOPED_TRACE(type);
    CheckpointState state;
    state.particles = with_tests(7, 3, type == 0 ? 0.5 : 0.0, type);
    const fs::path p = file("cp" + std::to_string(type) + ".h5");
    write_checkpoint(p, state);
    expect_same_bodies(state.particles, read_checkpoint(p).particles);
    // The checkpoint is a snapshot too: its view keeps every body in PartType1.
    EXPECT_EQ(rows_of(p, "PartType1/Coordinates"), 7U);
    expect_same_bodies(state.particles, read_snapshot(p));
    const CheckpointState header = read_checkpoint_header(p);
    EXPECT_EQ(header.particles.n_active, 4U);
    EXPECT_EQ(header.particles.test_particle_type, type);
  }
  // Every body active, type 1: the type is kept, NumActive is not written.
  CheckpointState all;
  all.particles = test::random_system(4, 2);
  all.particles.test_particle_type = 1;
  write_checkpoint(file("all.h5"), all);
  const hdf5::File f = hdf5::File::open(file("all.h5"));
  EXPECT_FALSE(f.root().open_group("Checkpoint").has_attribute("NumActive"));
  const ParticleSystem back = read_checkpoint(file("all.h5")).particles;
  EXPECT_EQ(back.n_active, ParticleSystem::kAllActive);
  EXPECT_EQ(back.test_particle_type, 1);
}

TEST_F(TestParticleIoTest, CheckpointWithoutTheAttributesIsAllActiveAndBadOnesAreRefused) {
  CheckpointState state;
  state.particles = with_tests(6, 2, 0.0, 1);
  const fs::path good = file("good.h5");
  write_checkpoint(good, state);
  auto edited = [&](const std::string& name, const std::function<void(hid_t)>& edit) {
    const fs::path p = file(name);
    fs::copy_file(good, p);
    edit_group(p, "Checkpoint", edit);
    return p;
  };
  // Written before test particles: neither attribute, every body active, type 0.
  const fs::path old = edited("old.h5", [](hid_t g) {
    H5Adelete(g, "NumActive");
    H5Adelete(g, "TestParticleType");
  });
  set_mass(old, "Checkpoint/mass", 4, 1.0), set_mass(old, "Checkpoint/mass", 5, 2.0);
  const ParticleSystem back = read_checkpoint(old).particles;
  EXPECT_EQ(back.n_active, ParticleSystem::kAllActive);
  EXPECT_EQ(back.test_particle_type, 0);
  EXPECT_EQ(back.mass[5], 2.0);
  // A massless body among the active ones of an older checkpoint is refused as before.
  const fs::path zero = edited("zero.h5", [](hid_t g) { H5Adelete(g, "NumActive"); });
  EXPECT_EQ(error_of([&] { (void)read_checkpoint(zero); }),
            zero.string() + ": /Checkpoint/mass[4]: must be finite and > 0 (got 0)");
  struct Case {
    const char* name;
    std::function<void(hid_t)> edit;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"many", [](hid_t g) { set_attribute(g, "NumActive", 9); },
       "/Checkpoint/NumActive: must be at most the 6 bodies (got 9)"},
      {"half", [](hid_t g) { set_attribute(g, "NumActive", 2.5); },
       "/Checkpoint/NumActive: must be a non-negative integer (got 2.5)"},
      {"type", [](hid_t g) { set_attribute(g, "TestParticleType", 2); },
       "/Checkpoint/TestParticleType: must be one of 0, 1 (got 2)"},
      {"active", [](hid_t g) { set_attribute(g, "NumActive", 5); },
       "/Checkpoint/mass[4]: must be finite and > 0 (got 0)"},
  };
  for (const Case& c : cases) {
    const fs::path p = edited(std::string(c.name) + ".h5", c.edit);
    EXPECT_EQ(error_of([&] { (void)read_checkpoint(p); }), p.string() + ": " + c.expected)
        << c.name;
  }
  const fs::path negative = edited("negative.h5", [](hid_t) {});
  set_mass(negative, "Checkpoint/mass", 5, -1.0);
  EXPECT_EQ(error_of([&] { (void)read_checkpoint(negative); }),
            negative.string() + ": /Checkpoint/mass[5]: must be finite and >= 0 (got -1)");
}

#endif  // NBODY_HAVE_HDF5

}  // namespace
}  // namespace nbody
