// Large files written by several ranks at once (docs/snapshots.md, "Large files"):
// DirectWriter puts every byte of a range where it belongs, from pieces of any size at any
// offset, by O_DIRECT or without it; and a checkpoint and a float snapshot of more bodies
// than one block of rows and one staging buffer, written by 3 thread ranks, read back as the
// bodies written, every bit (float: as converted).
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "io/direct_writer.hpp"
#include "io/hdf5_file.hpp"
#include "io/io_trace.hpp"
#include "nbody/snapshot.hpp"
#include "test_helpers.hpp"
#include "thread_ranks.hpp"

namespace nbody {
namespace {

namespace fs = std::filesystem;
using io_detail::DirectWriter;
using io_detail::RowFiles;

fs::path folder(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / (name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::vector<unsigned char> bytes_of(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// Two writers, side by side in one file from an unaligned offset, each from pieces of
/// random sizes (1 byte to 3 staging buffers), give the file the bytes they were given.
void check_two_writers(bool with_direct) {
  const fs::path dir = folder("nbody_direct_writer");
  const fs::path path = dir / "f.bin";
  const std::uint64_t start = 5021, first = 3 * DirectWriter::kStage + 777, second = 1234567;
  std::vector<unsigned char> want(start + first + second + 100, 0);
  std::mt19937_64 rng(7);
  for (std::uint64_t i = start; i < start + first + second; ++i) want[i] = (unsigned char)(rng());
  {
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(want.data()), std::streamsize(start));
    fs::resize_file(path, want.size());  // as the layout leaves it: the rows' room, no bytes
  }
  bool direct_taken = false;
  for (const auto& [from, count] : {std::pair{start, first}, std::pair{start + first, second}}) {
    RowFiles files{::open(path.c_str(), O_WRONLY | O_CLOEXEC),
                   with_direct ? ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_DIRECT) : -1};
    direct_taken = direct_taken || files.direct >= 0;
    ASSERT_GE(files.buffered, 0);
    {
      DirectWriter w(files, from);
      std::uniform_int_distribution<std::uint64_t> size(1, 3 * DirectWriter::kStage);
      for (std::uint64_t done = 0; done < count;) {
        const std::uint64_t piece = std::min(size(rng) >> (rng() % 20), count - done);
        ASSERT_TRUE(w.append(want.data() + from + done, std::size_t(piece))) << w.reason();
        done += piece;
      }
      ASSERT_TRUE(w.finish()) << w.reason();
    }
    for (const int fd : {files.buffered, files.direct})
      if (fd >= 0) ::close(fd);
  }
  if (with_direct && !direct_taken) std::printf("[ note ] %s refuses O_DIRECT\n", dir.c_str());
  EXPECT_TRUE(bytes_of(path) == want);
  fs::remove_all(dir);
}

TEST(DirectWriter, TwoWritersSideBySideGiveEveryByte) {
  check_two_writers(true);
}

TEST(DirectWriter, WithoutODirectTheSame) {
  check_two_writers(false);
}

TEST(DirectWriter, AFailedWriteSaysWhy) {
  RowFiles files{::open("/dev/null", O_RDONLY), -1};  // not open for writing
  ASSERT_GE(files.buffered, 0);
  DirectWriter w(files, 0);
  const char byte = 1;
  EXPECT_FALSE(w.append(&byte, 1));
  EXPECT_NE(w.reason().find("Bad file descriptor"), std::string::npos) << w.reason();
  ::close(files.buffered);
}

TEST(DirectWriter, AFailedWriteOnItsThreadIsSaidByFinish) {
  // The staged writes go out on threads: one that fails (a descriptor not open for writing)
  // is reported by finish() at the latest, with the system's reason, whatever append said.
  const fs::path dir = folder("nbody_direct_writer_fail");
  const fs::path path = dir / "f.bin";
  std::ofstream(path, std::ios::binary).put('x');
  RowFiles files{::open(path.c_str(), O_WRONLY | O_CLOEXEC), ::open(path.c_str(), O_RDONLY)};
  ASSERT_GE(files.buffered, 0);
  ASSERT_GE(files.direct, 0);
  {
    DirectWriter w(files, 0);
    const std::vector<unsigned char> data(2 * DirectWriter::kStage + 10, 7);
    (void)w.append(data.data(), data.size());  // may not know yet
    EXPECT_FALSE(w.finish());
    EXPECT_NE(w.reason().find("Bad file descriptor"), std::string::npos) << w.reason();
  }
  ::close(files.buffered);
  ::close(files.direct);
  fs::remove_all(dir);
}

TEST(IoTrace, VariableIsZeroOrOne) {
  EXPECT_FALSE(io_detail::io_trace_from(nullptr));  // unset: no trace
  EXPECT_FALSE(io_detail::io_trace_from("0"));
  EXPECT_TRUE(io_detail::io_trace_from("1"));
  for (const char* bad : {"", "2", "yes", "-1", " 1", "1.0", "99999999999999999999999"}) {
    const std::string message = test::message_of([&] { (void)io_detail::io_trace_from(bad); });
    EXPECT_NE(message.find("NBODY_IO_TRACE"), std::string::npos) << bad << ": " << message;
    EXPECT_NE(message.find("must be 0 or 1"), std::string::npos) << bad << ": " << message;
  }
}

#if NBODY_HAVE_HDF5
/// More rows than a block (2^18) and a staging buffer (8 MB of N x 3 doubles) on each of 3
/// ranks; ids not in file order.
TEST(LargeFilesTogether, CheckpointAndFloatSnapshotHoldEveryBody) {
  const fs::path dir = folder("nbody_large_together");
  constexpr std::size_t n = 3 * (std::size_t(1) << 19) + 4321;
  ParticleSystem all;
  for (std::size_t i = 0; i < n; ++i) {
    const double u = double(i) / double(n);
    all.add(Body{{u, std::sin(7.0 * u), -u * u},
                 {1.0 - u, std::cos(3.0 * u), 1e-3 * u},
                 1.0 / double(n),
                 0.0,
                 std::uint64_t(n - i)});
  }
  CheckpointState state;
  state.parameters = "dt = 0.01\n";
  constexpr int parts = 3;
  const auto errors = testing::run_parts<std::string>(parts, [&](std::shared_ptr<ForceReducer> r) {
    const std::size_t begin = n * std::size_t(r->part()) / parts,
                      end = n * std::size_t(r->part() + 1) / parts;
    ParticleSystem mine;
    for (std::size_t i = begin; i < end; ++i) mine.add(all.body(i));
    return test::message_of([&] {
      write_checkpoint_share(dir / "c.h5", state, mine, *r);
      write_snapshot_share(dir / "s.hdf5", mine,
                           SnapshotOptions{.precision = SnapshotPrecision::Float}, nullptr, *r);
    });
  });
  for (const std::string& e : errors) EXPECT_EQ(e, "");
  const ParticleSystem c = read_checkpoint(dir / "c.h5").particles;
  const ParticleSystem s = read_snapshot(dir / "s.hdf5");
  ASSERT_EQ(c.size(), n);
  ASSERT_EQ(s.size(), n);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) {  // the ranks' order is the bodies' order here
    wrong += c.id[i] != all.id[i] || c.x[i] != all.x[i] || c.y[i] != all.y[i] ||
             c.z[i] != all.z[i] || c.vx[i] != all.vx[i] || c.vz[i] != all.vz[i] ||
             c.mass[i] != all.mass[i];
    wrong += s.id[i] != all.id[i] || s.x[i] != double(float(all.x[i])) ||
             s.vy[i] != double(float(all.vy[i])) || s.z[i] != double(float(all.z[i])) ||
             s.mass[i] != all.mass[i];  // equal masses: Header/MassTable, in double
  }
  EXPECT_EQ(wrong, 0u);
  fs::remove_all(dir);
}

/// GADGET's MassTable: where every body has one mass, the header holds it and no Masses
/// dataset is written, whatever the number of ranks (one with no bodies has no say); where one
/// body on any rank differs, every body's mass is written.
TEST(LargeFilesTogether, EqualMassesGoToTheMassTableOnAnyNumberOfRanks) {
  const fs::path dir = folder("nbody_mass_table");
  for (const int parts : {1, 2, 3, 5}) {
    for (const bool odd_one : {false, true}) {
      constexpr std::size_t n = 4;
      const fs::path path = dir / fmt::format("s{}{}.hdf5", parts, odd_one ? "odd" : "");
      const auto errors =
          testing::run_parts<std::string>(parts, [&](std::shared_ptr<ForceReducer> r) {
            ParticleSystem mine;
            for (std::size_t i = 0; i < n; ++i) {  // body i on rank i % parts (5: one empty)
              if (int(i) % parts != r->part()) continue;
              const double m = odd_one && i == n - 1 ? 0.5 : 0.125;
              mine.add(Body{{double(i), 0, 0}, {0, 1, 0}, m, 0.0, i + 1});
            }
            return test::message_of(
                [&] { write_snapshot_share(path, mine, SnapshotOptions{}, nullptr, *r); });
          });
      for (const std::string& e : errors) EXPECT_EQ(e, "") << path;
      const hdf5::File f = hdf5::File::open(path);
      const std::vector<double> table =
          f.root().open_group("Header").read_attribute_doubles("MassTable");
      ASSERT_EQ(table.size(), 6u);
      EXPECT_EQ(table[1], odd_one ? 0.0 : 0.125) << path;
      EXPECT_EQ(f.root().open_group("PartType1").has("Masses"), odd_one) << path;
      const ParticleSystem s = read_snapshot(path);
      ASSERT_EQ(s.size(), n);
      double total = 0;
      for (const double m : s.mass) total += m;
      EXPECT_EQ(total, odd_one ? 0.875 : 0.5) << path;
    }
  }
  fs::remove_all(dir);
}

/// A run checks its ids once (SnapshotOptions::ids_usable): an empty answer is filled by
/// the check, a given one is used as it stands.
TEST(LargeFilesTogether, TheIdCheckRunsOnceAndIsKept) {
  const fs::path dir = folder("nbody_ids_once");
  ParticleSystem ps;
  for (std::uint64_t i = 0; i < 4; ++i) ps.add(Body{{double(i), 0, 0}, {0, 0, 0}, 1.0, 0.0, 7});
  std::optional<bool> usable;
  SnapshotOptions options;
  options.ids_usable = &usable;
  write_snapshot(dir / "a.hdf5", ps, options);
  ASSERT_TRUE(usable.has_value());
  EXPECT_FALSE(*usable);  // id 7 four times: the file numbers them 1..4
  EXPECT_EQ(read_snapshot(dir / "a.hdf5").id, (std::vector<std::uint64_t>{1, 2, 3, 4}));
  for (std::uint64_t i = 0; i < 4; ++i) ps.id[i] = 10 + i;
  write_snapshot(dir / "b.hdf5", ps, options);  // the kept answer: still numbered
  EXPECT_EQ(read_snapshot(dir / "b.hdf5").id, (std::vector<std::uint64_t>{1, 2, 3, 4}));
  usable.reset();
  write_checkpoint(dir / "c.h5", CheckpointState{}, ps, &usable);
  EXPECT_TRUE(usable.value_or(false));
  EXPECT_EQ(read_snapshot(dir / "c.h5").id, (std::vector<std::uint64_t>{10, 11, 12, 13}));
  fs::remove_all(dir);
}
#endif

}  // namespace
}  // namespace nbody
