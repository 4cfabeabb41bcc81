// Particle files written atomically: a write replaces the file whole or leaves the old one
// (a failing writer, a full disk, a signal), through symlinks and devices, with no temporary.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <csignal>

#include <algorithm>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "io_test_helpers.hpp"
#include "nbody/error.hpp"
#include "nbody/io.hpp"
#include "test_helpers.hpp"

namespace nbody {
namespace {

namespace fs = std::filesystem;
using testing::HasSubstr;
using testing_io::IoTest;

// ---- Atomic writing --------------------------------------------------------------

TEST_F(IoTest, AtomicWriteReplacesTheFileAndLeavesNoTemporary) {
  const fs::path p = file("out.txt");
  write_file_atomically(p, [](std::ostream& out) { out << "first\n"; });
  write_file_atomically(p, [](std::ostream& out) { out << "second\n"; });
  EXPECT_EQ(slurp(p), "second\n");
  EXPECT_EQ(dir_entries(), std::vector<std::string>{"out.txt"});
}

TEST_F(IoTest, AtomicWriteKeepsTheOldFileWhenTheWriterThrows) {
  const fs::path p = write_raw("keep.txt", "old content\n");
  EXPECT_THROW(write_file_atomically(p,
                                     [](std::ostream& out) {
                                       out << "half of the new";
                                       throw Error("writer failed");
                                     }),
               Error);
  EXPECT_EQ(slurp(p), "old content\n");
  EXPECT_EQ(dir_entries(), std::vector<std::string>{"keep.txt"});
}

TEST_F(IoTest, WritingIntoAMissingDirectoryNamesIt) {
  const fs::path p = file("no_such_dir") / "out.txt";
  try {
    write_text(p, test::random_system(2, 1));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr(p.string() + ": cannot write file"));
    EXPECT_THAT(e.what(), HasSubstr("no_such_dir' does not exist"));
  }
  EXPECT_FALSE(fs::exists(file("no_such_dir")));  // not created behind the user's back
}

/// While it lives, files of this process may grow to `bytes`; a write() past that fails
/// with EFBIG (SIGXFSZ is ignored meanwhile): a full disk that needs no root.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    ::getrlimit(RLIMIT_FSIZE, &old_limit_);
    old_handler_ = std::signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{bytes, old_limit_.rlim_max};  // the hard limit stays: restorable
    ::setrlimit(RLIMIT_FSIZE, &limit);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &old_limit_);
    std::signal(SIGXFSZ, old_handler_);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;

 private:
  rlimit old_limit_{};
  void (*old_handler_)(int) = SIG_DFL;
};

TEST_F(IoTest, UnwritableFileGivesTheSystemsReasonAndKeepsTheOldOne) {
  const fs::path txt = write_raw("old.txt", "old text\n");
  const fs::path csv = write_raw("old.csv", "old csv\n");
  const ParticleSystem ps = test::random_system(5000, 3);  // about 700 kB of text
  for (const fs::path& p : {txt, csv}) {
    try {
      const FileSizeLimit limit(64 * 1024);
      write_particles(p, ps, resolve_format(p, ""));
      ADD_FAILURE() << "no error for " << p;
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), HasSubstr(p.string() + ": cannot write file (File too large)"));
    }
  }
  EXPECT_EQ(slurp(txt), "old text\n");
  EXPECT_EQ(slurp(csv), "old csv\n");
  std::vector<std::string> left = dir_entries();
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{"old.csv", "old.txt"}));  // no temporary
}

TEST_F(IoTest, RemoveTemporariesInProgressRemovesTheOneBeingWritten) {
  const fs::path p = write_raw("keep.txt", "old\n");
  try {
    write_file_atomically(p, [&](std::ostream& out) {
      out << "new" << std::flush;
      EXPECT_EQ(dir_entries().size(), 2u);  // keep.txt and its temporary
      remove_temporaries_in_progress();     // what nbody gen's signal handler calls
      EXPECT_EQ(dir_entries(), std::vector<std::string>{"keep.txt"});
    });
    ADD_FAILURE() << "the rename of a removed temporary succeeded";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("keep.txt: cannot write file (No such file or directory)"));
  }
  EXPECT_EQ(slurp(p), "old\n");
  remove_temporaries_in_progress();  // none registered now: a no-op
  EXPECT_EQ(dir_entries(), std::vector<std::string>{"keep.txt"});
}

TEST_F(IoTest, WritingThroughASymlinkRewritesItsTargetAndKeepsTheLink) {
  const fs::path target = write_raw("data.txt", "old\n");
  fs::create_symlink("data.txt", file("link.txt"));
  write_file_atomically(file("link.txt"), [](std::ostream& out) { out << "new\n"; });
  EXPECT_TRUE(fs::is_symlink(file("link.txt")));
  EXPECT_EQ(slurp(target), "new\n");
}

TEST_F(IoTest, WritingToADeviceWritesThroughIt) {
  if (!fs::is_character_file("/dev/null")) GTEST_SKIP() << "no /dev/null";
  write_file_atomically("/dev/null", [](std::ostream& out) { out << "gone\n"; });
  EXPECT_TRUE(fs::is_character_file("/dev/null"));  // not replaced by a regular file
}

TEST_F(IoTest, WritingOverADirectoryFailsCleanly) {
  fs::create_directory(file("taken"));
  EXPECT_THROW(write_csv(file("taken"), test::random_system(2, 1)), Error);
  EXPECT_TRUE(fs::is_directory(file("taken")));
  EXPECT_EQ(dir_entries(), std::vector<std::string>{"taken"});
}

}  // namespace
}  // namespace nbody
