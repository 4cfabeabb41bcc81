// Particle file reading and writing: exact round trips, what the readers accept, the
// "FILE:LINE: problem" errors for what they refuse, and the choice of format.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <iterator>
#include <sstream>
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

/// Bit-identical doubles: -0.0 and 0.0 differ, as a lossless round trip must keep them.
std::vector<std::uint64_t> bits(const std::vector<double>& v) {
  std::vector<std::uint64_t> out;
  for (double d : v) out.push_back(std::bit_cast<std::uint64_t>(d));
  return out;
}

void expect_same_bodies(const ParticleSystem& a, const ParticleSystem& b) {
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(bits(a.x), bits(b.x));
  EXPECT_EQ(bits(a.y), bits(b.y));
  EXPECT_EQ(bits(a.z), bits(b.z));
  EXPECT_EQ(bits(a.vx), bits(b.vx));
  EXPECT_EQ(bits(a.vy), bits(b.vy));
  EXPECT_EQ(bits(a.vz), bits(b.vz));
  EXPECT_EQ(bits(a.mass), bits(b.mass));
  EXPECT_EQ(bits(a.radius), bits(b.radius));
}

/// Values that a careless writer loses: tiny, subnormal, huge, not exact in binary,
/// negative zero.
ParticleSystem awkward_system(bool with_radii) {
  ParticleSystem ps = test::random_system(50, 42);
  const auto& awkward = test::kAwkwardValues;
  for (std::size_t i = 0; i < std::size(awkward); ++i) {
    ps.x[i] = awkward[i];
    ps.vy[i] = awkward[i];
    ps.z[i + 10] = -awkward[i];
    ps.mass[i] = std::fabs(awkward[i]) > 0 ? std::fabs(awkward[i]) : 1e-300;
  }
  if (with_radii) {
    for (std::size_t i = 0; i < ps.size(); ++i)
      ps.radius[i] = i % 3 == 0 ? 0.0 : 1e-3 / 3.0 * double(i);
  }
  return ps;
}

// ---- Round trips -----------------------------------------------------------------

TEST_F(IoTest, TextRoundTripIsBitExact) {
  for (bool radii : {false, true}) {
    const ParticleSystem ps = awkward_system(radii);
    const fs::path p = file(radii ? "with_radii.txt" : "no_radii.txt");
    write_text(p, ps);
    const ParticleSystem back = read_text(p);
    expect_same_bodies(ps, back);
    EXPECT_EQ(back.dim, 3);
    for (std::size_t i = 0; i < back.size(); ++i) EXPECT_EQ(back.id[i], i + 1);
  }
}

TEST_F(IoTest, TextWritesRadiusColumnOnlyWhenSomeBodyHasOne) {
  ParticleSystem ps = test::random_system(3, 1);
  write_text(file("a.txt"), ps);
  std::istringstream lines(slurp(file("a.txt")));
  std::string header, row;
  std::getline(lines, header);
  std::getline(lines, row);
  EXPECT_EQ(header, "# x y z vx vy vz m");
  std::istringstream fields(row);
  EXPECT_EQ(std::distance(std::istream_iterator<std::string>(fields),
                          std::istream_iterator<std::string>()),
            7);

  ps.radius[1] = 0.25;
  write_text(file("b.txt"), ps);
  const std::string text = slurp(file("b.txt"));
  EXPECT_EQ(text.substr(0, text.find('\n')), "# x y z vx vy vz m r");
  EXPECT_EQ(read_text(file("b.txt")).radius, (std::vector<double>{0.0, 0.25, 0.0}));
}

TEST_F(IoTest, CsvRoundTripIsBitExactAndKeepsIds) {
  ParticleSystem ps = awkward_system(true);
  for (std::size_t i = 0; i < ps.size(); ++i) ps.id[i] = 1000000000000ULL - 7 * i;  // not 1..N
  const fs::path p = file("out.csv");
  write_csv(p, ps);
  const std::string text = slurp(p);
  EXPECT_EQ(text.substr(0, text.find('\n')), "x,y,z,vx,vy,vz,m,r,id");
  const ParticleSystem back = read_csv(p);
  expect_same_bodies(ps, back);
  EXPECT_EQ(back.id, ps.id);
  EXPECT_EQ(back.dim, 3);
}

TEST_F(IoTest, RoundTripOfManyBodiesCrossesReadBufferBoundaries) {
  // Several MiB: lines straddle the reader's 1 MiB chunks.
  const ParticleSystem ps = test::random_system(30000, 7);
  for (FileFormat f : {FileFormat::Text, FileFormat::Csv}) {
    const fs::path p = file(f == FileFormat::Csv ? "big.csv" : "big.txt");
    write_particles(p, ps, f);
    ASSERT_GT(fs::file_size(p), std::uintmax_t{2} << 20);
    const ParticleSystem back = read_particles(p, f);
    expect_same_bodies(ps, back);
    EXPECT_EQ(back.id, ps.id);
  }
}

// ---- What the readers accept -----------------------------------------------------

TEST_F(IoTest, TextAcceptsCommentsBlankLinesTabsCrlfAndPlusSigns) {
  const fs::path p = write_raw("seed.txt",
                               "# a seed file\r\n"
                               "\r\n"
                               "   # indented comment\n"
                               "1 2 3 0.1 0.2 0.3 1.5\r\n"
                               "   \t  \n"
                               "\t-1\t+2  3e0 0 0 0 2 0.5  # trailing comment\n"
                               "0 0 0 0 0 0 1e-3");  // no final newline
  const ParticleSystem ps = read_text(p);
  ASSERT_EQ(ps.size(), 3U);
  EXPECT_EQ(ps.x, (std::vector<double>{1, -1, 0}));
  EXPECT_EQ(ps.y, (std::vector<double>{2, 2, 0}));
  EXPECT_EQ(ps.vz, (std::vector<double>{0.3, 0, 0}));
  EXPECT_EQ(ps.mass, (std::vector<double>{1.5, 2, 1e-3}));
  EXPECT_EQ(ps.radius, (std::vector<double>{0, 0.5, 0}));
  EXPECT_EQ(ps.id, (std::vector<std::uint64_t>{1, 2, 3}));
}

TEST_F(IoTest, CsvAcceptsAnyColumnOrderSpacesCommentsAndCrlf) {
  const fs::path p = write_raw("any.csv",
                               "# exported by hand\r\n"
                               " m , vz,vy , vx,z,y,x\r\n"
                               "\r\n"
                               "2, 0.3, 0.2, 0.1, 3, 2, 1\r\n"
                               "# between rows\r\n"
                               "1,0,0,0,0,0,-1\r\n");
  const ParticleSystem ps = read_csv(p);
  ASSERT_EQ(ps.size(), 2U);
  EXPECT_EQ(ps.x, (std::vector<double>{1, -1}));
  EXPECT_EQ(ps.z, (std::vector<double>{3, 0}));
  EXPECT_EQ(ps.vx, (std::vector<double>{0.1, 0}));
  EXPECT_EQ(ps.mass, (std::vector<double>{2, 1}));
  EXPECT_EQ(ps.radius, (std::vector<double>{0, 0}));
  EXPECT_EQ(ps.id, (std::vector<std::uint64_t>{1, 2}));  // no id column: 1..N
}

TEST_F(IoTest, CsvKeepsGivenIdsInAnyOrder) {
  const fs::path p = write_raw("ids.csv",
                               "id,x,y,z,vx,vy,vz,m,r\n"
                               "17,0,0,0,0,0,0,1,0\n"
                               "+3,1,0,0,0,0,0,1,0.5\n"
                               "9,2,0,0,0,0,0,1,0\n");
  const ParticleSystem ps = read_csv(p);
  EXPECT_EQ(ps.id, (std::vector<std::uint64_t>{17, 3, 9}));
  EXPECT_EQ(ps.radius, (std::vector<double>{0, 0.5, 0}));
}

TEST_F(IoTest, LineLongerThanTheReadBufferIsRead) {
  const fs::path p = write_raw("long.txt", "#" + std::string(3 << 20, 'c') + "\n1 2 3 4 5 6 7\n");
  const ParticleSystem ps = read_text(p);
  ASSERT_EQ(ps.size(), 1U);
  EXPECT_EQ(ps.mass[0], 7);
}

// ---- What the readers refuse: "FILE:LINE: problem" --------------------------------

TEST_F(IoTest, TextErrorsNameFileLineAndColumn) {
  const std::string good = "0 0 0 0 0 0 1\n";
  struct Case {
    std::string content;
    std::string where;  // "particles.txt:LINE:"
    std::string problem;
  };
  const std::vector<Case> cases = {
      {"# c\n" + good + good + good + good + good + "1 2 3 4 5 6\n",
       "particles.txt:7:", "expected 7 or 8 columns (x y z vx vy vz m [r]), found 6"},
      {good + good + good + good + "1 2 3 4 5 6 7 8 9\n",
       "particles.txt:5:", "expected 7 or 8 columns (x y z vx vy vz m [r]), found 9"},
      {good + "\n1 2 3 abc 5 6 7\n", "particles.txt:3:", "column 4 (vx): 'abc' is not a number"},
      {"1.5abc 0 0 0 0 0 1\n", "particles.txt:1:", "column 1 (x): '1.5abc' is not a number"},
      {"0 +-1 0 0 0 0 1\n", "particles.txt:1:", "column 2 (y): '+-1' is not a number"},
      {"0 0 0x10 0 0 0 1\n", "particles.txt:1:", "column 3 (z): '0x10' is not a number"},
      {good + good + good + good + "nan 0 0 0 0 0 1\n",
       "particles.txt:5:", "column 1 (x): value is NaN"},
      {"0 0 0 0 -inf 0 1\n", "particles.txt:1:", "column 5 (vy): value is infinite"},
      {"0 0 0 0 0 Infinity 1\n", "particles.txt:1:", "column 6 (vz): value is infinite"},
      {"1e400 0 0 0 0 0 1\n", "particles.txt:1:", "column 1 (x): '1e400' is out of the range"},
      {good + good + good + good + good + good + good + good + "0 0 0 0 0 0 -1\n",
       "particles.txt:9:", "column 7 (m): mass must be >= 0, got -1"},
      // Mass 0: a test particle (test_test_particle_io.cpp), and some body must have mass.
      {"0 0 0 0 0 0 0\n",
       "particles.txt:", "no body has mass: test particles need at least one body with mass"},
      {good + "0 0 0 0 0 0 1 -0.5\n",
       "particles.txt:2:", "column 8 (r): radius must be >= 0, got -0.5"},
      {"0 0 0 0 0 0 1 nan\n", "particles.txt:1:", "column 8 (r): value is NaN"},
      // File content is shown escaped (a line cannot drive the terminal) and cut.
      {"\x1b[31mRED 0 0 0 0 0 1\n",
       "particles.txt:1:", "column 1 (x): '\\x1b[31mRED' is not a number"},
      {std::string(5000, '7') + "x 0 0 0 0 0 1\n", "particles.txt:1:",
       "column 1 (x): '" + std::string(60, '7') + "... (5001 bytes)' is not a number"},
  };
  for (const Case& c : cases) {
    const std::string msg = read_error("particles.txt", c.content);
    EXPECT_THAT(msg, HasSubstr(c.where + " " + c.problem)) << "content:\n" << c.content;
  }
}

TEST_F(IoTest, CsvErrorsNameFileLineAndColumn) {
  const std::string header = "x,y,z,vx,vy,vz,m\n";
  const std::string good = "0,0,0,0,0,0,1\n";
  struct Case {
    std::string content;
    std::string where;
    std::string problem;
  };
  const std::vector<Case> cases = {
      {"# c\nx,y,z,vx,vy,vz,m,mass\n", "p.csv:2:", "column 8: unknown column 'mass'"},
      {"1,2,3,4,5,6,7\n", "p.csv:1:", "column 1: unknown column '1' (the first line must be"},
      {"x,y,z,vx,vz\n", "p.csv:1:", "header lacks required columns vy, m"},
      {"x,y,z,vx,vy,vz,m,x\n", "p.csv:1:", "column 8: column 'x' appears twice (also column 1)"},
      {"x,y,,vx,vy,vz,m\n", "p.csv:1:", "column 3: empty column name"},
      {header + good + "0,0,0,0,0,1\n",
       "p.csv:3:", "expected 7 columns (as in the header on line 1), found 6"},
      {header + good + "\n0,0,0,abc,0,0,1\n", "p.csv:4:", "column 4 (vx): 'abc' is not a number"},
      {header + "0,0,,0,0,0,1\n", "p.csv:2:", "column 3 (z): field is empty"},
      {header + "nan,0,0,0,0,0,1\n", "p.csv:2:", "column 1 (x): value is NaN"},
      {header + "0,0,0,0,0,0,-1\r\n", "p.csv:2:", "column 7 (m): mass must be >= 0, got -1"},
      {"x,y,z,vx,vy,vz,m,r\n0,0,0,0,0,0,1,-0.5\n",
       "p.csv:2:", "column 8 (r): radius must be >= 0, got -0.5"},
      {"id,x,y,z,vx,vy,vz,m\n0,0,0,0,0,0,0,1\n",
       "p.csv:2:", "column 1 (id): id must be a positive integer, got '0'"},
      {"x,y,z,vx,vy,vz,m,id\n0,0,0,0,0,0,1,-3\n",
       "p.csv:2:", "column 8 (id): id must be a positive integer, got '-3'"},
      {"x,y,z,vx,vy,vz,m,id\n0,0,0,0,0,0,1,1.5\n",
       "p.csv:2:", "column 8 (id): id must be a positive integer, got '1.5'"},
      {"x,y,z,vx,vy,vz,m,id\n0,0,0,0,0,0,1,5\n0,0,0,0,0,0,1,2\n# c\n0,0,0,0,0,0,1,9\n"
       "0,0,0,0,0,0,1,2\n0,0,0,0,0,0,1,5\n",
       "p.csv:6:", "duplicate id 2 (first used on line 3)"},
      {"x,y,z,vx,vy,vz,m,\x1b]0;t\x07\n", "p.csv:1:", "column 8: unknown column '\\x1b]0;t\\x07'"},
      {std::string(100000, 'q') + ",x,y,z,vx,vy,vz,m\n", "p.csv:1:",
       "column 1: unknown column '" + std::string(60, 'q') + "... (100000 bytes)' (the first"},
  };
  for (const Case& c : cases) {
    const std::string msg = read_error("p.csv", c.content);
    EXPECT_THAT(msg, HasSubstr(c.where + " " + c.problem)) << "content:\n" << c.content;
  }
}

TEST_F(IoTest, MissingFileNamesFileAndReason) {
  for (const char* name : {"missing.txt", "missing.csv"}) {
    const fs::path p = file(name);
    try {
      (void)read_particles(p, resolve_format(p, ""));
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_THAT(e.what(),
                  HasSubstr(std::string(name) + ": cannot open file (No such file or directory)"));
    }
  }
}

TEST_F(IoTest, FilesWithoutBodiesAreRefused) {
  const std::string none = ": no particles found (the file is empty or holds only comments)";
  EXPECT_THAT(read_error("empty.txt", ""), HasSubstr("empty.txt" + none));
  EXPECT_THAT(read_error("comments.txt", "# only\n\n   # comments\r\n"),
              HasSubstr("comments.txt" + none));
  EXPECT_THAT(read_error("empty.csv", ""), HasSubstr("empty.csv" + none));
  EXPECT_THAT(read_error("header.csv", "# c\nx,y,z,vx,vy,vz,m\n\n"),
              HasSubstr("header.csv: no particles found"));
}

// ---- Format selection ------------------------------------------------------------

TEST(IoFormat, ExtensionDecidesUnlessNamed) {
  EXPECT_EQ(resolve_format("a.csv", ""), FileFormat::Csv);
  EXPECT_EQ(resolve_format("dir.d/a.CsV", "auto"), FileFormat::Csv);
  EXPECT_EQ(resolve_format("a.txt", ""), FileFormat::Text);
  EXPECT_EQ(resolve_format("a.dat", "auto"), FileFormat::Text);
  EXPECT_EQ(resolve_format("noext", ""), FileFormat::Text);
  EXPECT_EQ(resolve_format("a.csv", "text"), FileFormat::Text);
  EXPECT_EQ(resolve_format("a.txt", "csv"), FileFormat::Csv);
  EXPECT_EQ(format_names(), (std::vector<std::string>{"text", "csv", "hdf5"}));
}

TEST(IoFormat, UnknownFormatNameIsAnError) {
  try {
    (void)resolve_format("a.txt", "xml");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "--format: unknown file format (available: text, csv, hdf5) (got xml)");
  }
}

TEST_F(IoTest, ReadAndWriteParticlesUseTheGivenFormat) {
  const ParticleSystem ps = test::random_system(4, 3);
  write_particles(file("really_csv.txt"), ps, FileFormat::Csv);
  EXPECT_EQ(slurp(file("really_csv.txt")).rfind("x,y,z,", 0), 0U);
  expect_same_bodies(ps, read_particles(file("really_csv.txt"), FileFormat::Csv));
  EXPECT_THROW((void)read_particles(file("really_csv.txt"), FileFormat::Text), Error);
}

}  // namespace
}  // namespace nbody
