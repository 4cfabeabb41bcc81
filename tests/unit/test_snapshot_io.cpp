// HDF5 snapshots and checkpoints: exact round trips (float64), float rounding (float32),
// the GADGET header and optional datasets, files from other codes (several types, masses
// from MassTable, float32, no ids), errors naming the file and the dataset for bad files,
// bit-exact checkpoints, and the atomic replacement of the file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "nbody/error.hpp"
#include "nbody/io.hpp"
#include "nbody/snapshot.hpp"
#include "test_helpers.hpp"

#if NBODY_HAVE_HDF5
#include "io/hdf5_file.hpp"
#endif

namespace nbody {
namespace {

using test::error_of;

namespace fs = std::filesystem;
using testing::HasSubstr;

class SnapshotTest : public test::FolderTest {
 protected:
  SnapshotTest() : FolderTest("h5") {}
  void SetUp() override {
    if (!have_hdf5())
      GTEST_SKIP() << "nbody was built without HDF5 (install libhdf5-dev and rebuild)";
    FolderTest::SetUp();
  }

  std::vector<std::string> dir_entries() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename());
    return names;
  }
};

/// Values a lossless format must keep: -0.0, denormals, extremes, non-terminating binaries.
ParticleSystem awkward_system() {
  ParticleSystem ps = test::random_system(40, 42);
  const auto& awkward = test::kAwkwardValues;
  for (std::size_t i = 0; i < std::size(awkward); ++i) {
    ps.x[i] = awkward[i];
    ps.vy[i] = awkward[i];
    ps.z[i + 10] = -awkward[i];
  }
  for (std::size_t i = 0; i < ps.size(); ++i) {
    ps.radius[i] = i % 3 == 0 ? 0.0 : 1e-3 / 3.0 * double(i);
    ps.id[i] = 1000000000000ULL - 7 * i;  // not 1..N
  }
  ps.time = 12.345678901234567;
  return ps;
}

/// Bitwise equality of two double arrays (so -0.0 != 0.0 and NaN == NaN).
bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

void expect_same_state(const ParticleSystem& a, const ParticleSystem& b) {
  EXPECT_TRUE(same_bits(a.x, b.x));
  EXPECT_TRUE(same_bits(a.y, b.y));
  EXPECT_TRUE(same_bits(a.z, b.z));
  EXPECT_TRUE(same_bits(a.vx, b.vx));
  EXPECT_TRUE(same_bits(a.vy, b.vy));
  EXPECT_TRUE(same_bits(a.vz, b.vz));
  EXPECT_TRUE(same_bits(a.mass, b.mass));
  EXPECT_TRUE(same_bits(a.radius, b.radius));
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.dim, b.dim);
  EXPECT_EQ(std::memcmp(&a.time, &b.time, sizeof(double)), 0);
}

// ---- Snapshots: round trips ---------------------------------------------------------

TEST_F(SnapshotTest, Float64RoundTripIsExactAndKeepsIdsRadiiAndTime) {
  const ParticleSystem ps = awkward_system();
  const fs::path p = file("snap.hdf5");
  write_snapshot(p, ps, SnapshotOptions{});
  EXPECT_TRUE(looks_like_hdf5(p));
  expect_same_state(ps, read_snapshot(p));
}

TEST_F(SnapshotTest, Float32RoundTripRoundsEveryValueToFloat) {
  ParticleSystem ps = test::random_system(100, 5);
  ps.radius.assign(ps.size(), 0.01);
  ps.time = 0.1;
  const fs::path p = file("snap32.hdf5");
  write_snapshot(p, ps, SnapshotOptions{.precision = SnapshotPrecision::Float});
  const ParticleSystem back = read_snapshot(p);
  ASSERT_EQ(back.size(), ps.size());
  auto as_float = [](double v) { return double(static_cast<float>(v)); };
  for (std::size_t i = 0; i < ps.size(); ++i) {
    EXPECT_EQ(back.x[i], as_float(ps.x[i]));
    EXPECT_EQ(back.z[i], as_float(ps.z[i]));
    EXPECT_EQ(back.vy[i], as_float(ps.vy[i]));
    EXPECT_EQ(back.mass[i], as_float(ps.mass[i]));
    EXPECT_EQ(back.radius[i], as_float(0.01));
  }
  EXPECT_EQ(back.time, 0.1);  // attributes stay float64
  EXPECT_EQ(back.id, ps.id);
}

TEST_F(SnapshotTest, OneBodyTwoDimensionsAndNoBodiesRoundTrip) {
  ParticleSystem one;
  one.add(Body{{1, 2, 3}, {4, 5, 6}, 7, 0, 42});
  write_snapshot(file("one.hdf5"), one, SnapshotOptions{});
  expect_same_state(one, read_snapshot(file("one.hdf5")));

  const ParticleSystem flat = test::random_system(30, 8, 2);
  write_snapshot(file("flat.h5"), flat, SnapshotOptions{});
  const ParticleSystem flat_back = read_snapshot(file("flat.h5"));
  EXPECT_EQ(flat_back.dim, 2);
  expect_same_state(flat, flat_back);

  // N = 0 is written as empty datasets (h5py and yt read it), but nbody refuses to read a
  // snapshot without bodies: nothing could be run or measured from it.
  ParticleSystem none;
  none.time = 3;
  write_snapshot(file("none.hdf5"), none, SnapshotOptions{.radius = true, .acceleration = true});
  EXPECT_THAT(error_of([&] { (void)read_snapshot(file("none.hdf5")); }),
              HasSubstr("none.hdf5: /Header/NumPart_ThisFile: the snapshot holds no bodies"));
}

TEST_F(SnapshotTest, UnusableIdsAreReplacedByOneToN) {
  ParticleSystem ps = test::random_system(4, 1);
  ps.id = {7, 0, 9, 3};  // 0 is not a GADGET id
  write_snapshot(file("zero.hdf5"), ps, SnapshotOptions{});
  EXPECT_EQ(read_snapshot(file("zero.hdf5")).id, (std::vector<std::uint64_t>{1, 2, 3, 4}));
  ps.id = {5, 6, 5, 8};  // duplicate
  write_snapshot(file("dup.hdf5"), ps, SnapshotOptions{});
  EXPECT_EQ(read_snapshot(file("dup.hdf5")).id, (std::vector<std::uint64_t>{1, 2, 3, 4}));
}

TEST_F(SnapshotTest, ParticleFilesPickHdf5ByExtensionOrSignature) {
  EXPECT_EQ(resolve_format("a.hdf5", ""), FileFormat::Hdf5);
  EXPECT_EQ(resolve_format("a.H5", "auto"), FileFormat::Hdf5);
  EXPECT_EQ(resolve_format("a.hdf", ""), FileFormat::Hdf5);
  EXPECT_EQ(resolve_format("a.txt", "hdf5"), FileFormat::Hdf5);
  EXPECT_THAT(format_names(), testing::Contains("hdf5"));

  const ParticleSystem ps = test::random_system(10, 2);
  write_particles(file("p.hdf5"), ps, resolve_format("p.hdf5", ""));
  expect_same_state(ps, read_particles(file("p.hdf5"), FileFormat::Hdf5));
  // GADGET snapshots often have no .hdf5 extension: the signature decides.
  fs::copy_file(file("p.hdf5"), file("snapshot_010"));
  expect_same_state(ps, read_particles(file("snapshot_010"), resolve_format("snapshot_010", "")));
  write_text(file("p.txt"), ps);
  EXPECT_FALSE(looks_like_hdf5(file("p.txt")));
  EXPECT_FALSE(looks_like_hdf5(file("missing.hdf5")));
}

// ---- Snapshots: errors --------------------------------------------------------------

TEST_F(SnapshotTest, TruncatedGarbageAndMissingFilesNameTheFile) {
  write_snapshot(file("whole.hdf5"), test::random_system(2000, 3), SnapshotOptions{});
  const auto size = fs::file_size(file("whole.hdf5"));
  fs::copy_file(file("whole.hdf5"), file("half.hdf5"));
  fs::resize_file(file("half.hdf5"), size / 2);
  const std::string half = file("half.hdf5").string();
  EXPECT_THAT(error_of([&] { (void)read_snapshot(half); }),
              HasSubstr(half + ": not a readable HDF5 file (truncated or corrupt?)"));
  // The signature survives truncation, so -i still reaches the HDF5 reader.
  EXPECT_THAT(error_of([&] { (void)read_particles(half, FileFormat::Text); }),
              HasSubstr(half + ": "));

  std::ofstream(file("garbage.hdf5"), std::ios::binary) << "x y z vx vy vz m\n1 2 3 4 5 6 7\n";
  const std::string garbage = file("garbage.hdf5").string();
  EXPECT_THAT(error_of([&] { (void)read_snapshot(garbage); }),
              HasSubstr(garbage + ": not a readable HDF5 file (truncated or corrupt?)"));
  const std::string missing = file("missing.hdf5").string();
  EXPECT_THAT(error_of([&] { (void)read_snapshot(missing); }),
              HasSubstr(missing + ": cannot open file"));
  EXPECT_THAT(error_of([&] { (void)read_checkpoint(half); }),
              HasSubstr(half + ": not a readable HDF5"));
}

TEST_F(SnapshotTest, PotentialOfTheWrongSizeIsRefused) {
  const ParticleSystem ps = test::random_system(3, 1);
  const std::vector<double> potential(2, -1.0);
  EXPECT_THAT(error_of([&] { write_snapshot(file("p.hdf5"), ps, SnapshotOptions{}, &potential); }),
              HasSubstr("potential has 2 values for 3 bodies"));
  EXPECT_FALSE(fs::exists(file("p.hdf5")));
}

// ---- Checkpoints --------------------------------------------------------------------

CheckpointState sample_checkpoint(bool accelerations_valid) {
  CheckpointState state;
  state.particles = awkward_system();
  ParticleSystem& ps = state.particles;
  for (std::size_t i = 0; i < ps.size(); ++i) {
    ps.ax[i] = -0.0;
    ps.ay[i] = 1.0 / double(i + 3);
    ps.az[i] = i == 5 ? std::numeric_limits<double>::denorm_min() : 1e-310 * double(i);
  }
  // The checkpoint keeps even ids a snapshot could not: 0 is "no id" (a repeated id is
  // refused: CheckpointReaderRefusesWhatNoRunHolds).
  ps.id[3] = 0;
  if (accelerations_valid) ps.set_accelerations_valid();
  state.step = 123456789012ULL;
  state.initial_energy = -0.2499999999999999;
  state.collisions = {.stages = 17,
                      .contacts = 1ULL << 40,
                      .merges = 3,
                      .max_overlap_last = 0.125,
                      .energy_lost = 1.0 / 7.0,
                      .seconds = 2.5e-3};
  state.next_snapshot = 12;
  state.next_snapshot_time = 1.2000000000000002;
  state.parameters = "[run]\ndt = 0.01\nname = \"Plummer ε = 0.05\"\n";
  return state;
}

TEST_F(SnapshotTest, CheckpointRoundTripIsBitExact) {
  for (bool valid : {true, false}) {
    const CheckpointState state = sample_checkpoint(valid);
    const fs::path p = file(valid ? "valid.h5" : "stale.h5");
    write_checkpoint(p, state);
    const CheckpointState back = read_checkpoint(p);
    const ParticleSystem& a = state.particles;
    const ParticleSystem& b = back.particles;
    expect_same_state(a, b);
    EXPECT_TRUE(same_bits(a.ax, b.ax));
    EXPECT_TRUE(same_bits(a.ay, b.ay));
    EXPECT_TRUE(same_bits(a.az, b.az));
    EXPECT_EQ(b.accelerations_valid(), valid);
    EXPECT_EQ(back.step, state.step);
    EXPECT_EQ(std::memcmp(&back.initial_energy, &state.initial_energy, sizeof(double)), 0);
    EXPECT_EQ(back.next_snapshot, state.next_snapshot);
    EXPECT_EQ(back.next_snapshot_time, state.next_snapshot_time);
    EXPECT_EQ(back.collisions.stages, state.collisions.stages);
    EXPECT_EQ(back.collisions.contacts, state.collisions.contacts);
    EXPECT_EQ(back.collisions.merges, state.collisions.merges);
    EXPECT_EQ(back.collisions.max_overlap_last, state.collisions.max_overlap_last);
    EXPECT_EQ(back.collisions.energy_lost, state.collisions.energy_lost);
    EXPECT_EQ(back.collisions.seconds, state.collisions.seconds);
    EXPECT_EQ(back.parameters, state.parameters);
  }
}

TEST_F(SnapshotTest, CheckpointIsAlsoASnapshotAndASnapshotIsNoCheckpoint) {
  CheckpointState state = sample_checkpoint(true);
  state.particles.assign_sequential_ids();
  write_checkpoint(file("cp.h5"), state);
  expect_same_state(state.particles, read_snapshot(file("cp.h5")));

  // Ids a snapshot cannot hold: the snapshot view numbers the bodies 1..N instead.
  const CheckpointState odd = sample_checkpoint(true);
  write_checkpoint(file("odd.h5"), odd);
  const ParticleSystem view = read_snapshot(file("odd.h5"));
  EXPECT_EQ(view.id[39], 40U);
  EXPECT_EQ(read_checkpoint(file("odd.h5")).particles.id, odd.particles.id);

  write_snapshot(file("snap.h5"), state.particles, SnapshotOptions{});
  const std::string snap = file("snap.h5").string();
  EXPECT_THAT(error_of([&] { (void)read_checkpoint(snap); }),
              HasSubstr(snap + ": /Checkpoint is missing (not an nbody checkpoint"));
}

// ---- Atomic replacement -------------------------------------------------------------

TEST_F(SnapshotTest, WritePathAtomicallyKeepsTheOldFileWhenTheWriterThrows) {
  const fs::path p = file("keep.hdf5");
  const ParticleSystem old = test::random_system(5, 1);
  write_snapshot(p, old, SnapshotOptions{});
  const auto old_size = fs::file_size(p);

  fs::path seen_tmp;
  EXPECT_THROW(write_path_atomically(p,
                                     [&](const fs::path& tmp) {
                                       seen_tmp = tmp;
                                       std::ofstream(tmp) << "partial";
                                       throw Error("writer failed");
                                     }),
               Error);
  EXPECT_EQ(seen_tmp.parent_path(), p.parent_path());  // beside the target: rename is atomic
  EXPECT_FALSE(fs::exists(seen_tmp));
  EXPECT_EQ(dir_entries(), std::vector<std::string>{"keep.hdf5"});
  EXPECT_EQ(fs::file_size(p), old_size);
  expect_same_state(old, read_snapshot(p));

  // A failing HDF5 write (bad potential) is no different.
  const std::vector<double> bad(1, 0.0);
  EXPECT_THROW(write_snapshot(p, test::random_system(9, 2), SnapshotOptions{}, &bad), Error);
  EXPECT_EQ(dir_entries(), std::vector<std::string>{"keep.hdf5"});

  // A writer that creates nothing is an error too, and the target is untouched.
  EXPECT_THAT(error_of([&] { write_path_atomically(p, [](const fs::path&) {}); }),
              HasSubstr("the writer created no file"));
  EXPECT_EQ(fs::file_size(p), old_size);

  // Success replaces the file and leaves nothing else behind.
  write_path_atomically(p, [](const fs::path& tmp) { std::ofstream(tmp) << "new"; });
  EXPECT_EQ(fs::file_size(p), 3U);
  EXPECT_EQ(dir_entries(), std::vector<std::string>{"keep.hdf5"});
  EXPECT_THAT(error_of([&] { write_snapshot(file("no/such/dir.hdf5"), old, SnapshotOptions{}); }),
              HasSubstr("does not exist"));
}

TEST_F(SnapshotTest, FailedWriteGivesTheReasonKeepsTheOldFileAndLeavesNoTemporary) {
  // A file size limit fails the write with EFBIG, as a full disk fails it with ENOSPC. The
  // process must not crash at exit either (libhdf5 1.10's atexit closed the failed file).
  const fs::path p = file("old.hdf5");
  write_snapshot(p, test::random_system(3, 1), SnapshotOptions{});
  const auto old_size = fs::file_size(p);
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit small = saved;
  small.rlim_cur = 100000;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  const std::string message =
      error_of([&] { write_snapshot(p, test::random_system(20000, 2), SnapshotOptions{}); });
  CheckpointState state;
  state.particles = test::random_system(20000, 3);
  const std::string checkpoint = error_of([&] { write_checkpoint(file("c.h5"), state); });
  setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_THAT(message, HasSubstr(p.string() + ": "));
  EXPECT_THAT(message, HasSubstr("(File too large)"));
  EXPECT_THAT(checkpoint, HasSubstr("(File too large)"));
  EXPECT_EQ(dir_entries(), std::vector<std::string>{"old.hdf5"});
  EXPECT_EQ(fs::file_size(p), old_size);
  EXPECT_EQ(read_snapshot(p).size(), 3U);
}

TEST_F(SnapshotTest, CorruptAttributeMessagesAreRefusedNotReadPastTheirEnd) {
  // Every byte of the message and attribute headers of each /Header attribute, flipped:
  // each file reads or is refused with nbody::Error, and never reads out of bounds (what
  // libhdf5 1.10 did in H5Aexists; the debug preset runs this under AddressSanitizer).
  ParticleSystem ps = test::random_system(4, 1, 2);
  write_snapshot(file("good.hdf5"), ps, SnapshotOptions{});
  std::ifstream in(file("good.hdf5"), std::ios::binary);
  const std::string good((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  int refused = 0;
  for (const char* name : {"NumPart_ThisFile", "MassTable", "Time", "Dimension"}) {
    const auto at = good.find(std::string(name) + '\0');
    ASSERT_NE(at, std::string::npos) << name;
    for (std::size_t offset = at - 16; offset < at; ++offset) {
      std::string bad = good;
      bad[offset] = static_cast<char>(bad[offset] ^ 0xff);
      std::ofstream(file("bad.hdf5"), std::ios::binary | std::ios::trunc) << bad;
      try {
        const ParticleSystem back = read_snapshot(file("bad.hdf5"));
        EXPECT_EQ(back.dim, 2) << name << " " << offset;  // never 2-D read as 3-D
      } catch (const Error& e) {
        EXPECT_THAT(e.what(), HasSubstr(file("bad.hdf5").string() + ": ")) << offset;
        ++refused;
      }
    }
  }
  EXPECT_GT(refused, 40);
}

TEST(SnapshotWithoutHdf5, EveryCallSaysHowToGetIt) {
  if (have_hdf5()) GTEST_SKIP() << "this build has HDF5; the stub is not compiled in";
  try {
    (void)read_snapshot("x.hdf5");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("x.hdf5: nbody was built without HDF5 (install libhdf5-dev"));
  }
}

}  // namespace
}  // namespace nbody
