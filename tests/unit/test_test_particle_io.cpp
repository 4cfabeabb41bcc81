// Test particles (ParticleSystem::n_active, test_particle_type) in text and CSV particle
// files: the massless bodies after every body with mass, or a first line "# nbody: n_active=K
// test_particle_type=T" where the masses do not say it; what a reader refuses names the place.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

#include "nbody/io.hpp"
#include "test_helpers.hpp"
#include "test_particle_io_helpers.hpp"

namespace nbody {
namespace {

namespace fs = std::filesystem;
using test::error_of;
using testing_test_particle_io::expect_same_bodies;
using testing_test_particle_io::TestParticleIoTest;
using testing_test_particle_io::with_tests;

// ---- Text and CSV ------------------------------------------------------------------

TEST_F(TestParticleIoTest, TextAndCsvReadTrailingMasslessBodiesAsTestParticles) {
  const ParticleSystem ps = with_tests(9, 3, 0.0, 0);
  write_text(file("p.txt"), ps);
  const ParticleSystem text = read_text(file("p.txt"));
  expect_same_bodies(ps, text, false);
  EXPECT_EQ(text.n_active, 6U);
  EXPECT_TRUE(text.has_test_particles());
  write_csv(file("p.csv"), ps);
  expect_same_bodies(ps, read_csv(file("p.csv")));

  // Without massless bodies nothing changes: every body active.
  const ParticleSystem all = test::random_system(5, 3);
  write_text(file("all.txt"), all);
  EXPECT_EQ(read_text(file("all.txt")).n_active, ParticleSystem::kAllActive);
  write_csv(file("all.csv"), all);
  EXPECT_FALSE(read_csv(file("all.csv")).has_test_particles());
}

TEST_F(TestParticleIoTest, TextAndCsvKeepWhatTheMassesDoNotSay) {
  // Test particles with mass, type 1, and an active body of mass 0 among others with mass:
  // a first line "# nbody: n_active=K test_particle_type=T" says them, and they read back.
  ParticleSystem heavy = with_tests(6, 2, 0.5, 0);
  heavy.mass[5] = 0.75;
  ParticleSystem type1 = with_tests(9, 3, 0.0, 1);
  ParticleSystem massless_active = test::random_system(5, 3);
  massless_active.mass[2] = 0;  // every body active: a reader of the masses alone refuses it
  for (const ParticleSystem* ps : {&heavy, &type1, &massless_active}) {
    write_text(file("d.txt"), *ps);
    expect_same_bodies(*ps, read_text(file("d.txt")), false);
    write_csv(file("d.csv"), *ps);
    expect_same_bodies(*ps, read_csv(file("d.csv")));
  }
  std::ifstream in(file("d.txt"));
  std::string first;
  std::getline(in, first);
  EXPECT_EQ(first, "# nbody: n_active=5 test_particle_type=0");
  // Where the masses say it all, no such line: the files stay as before.
  write_text(file("plain.txt"), with_tests(9, 3, 0.0, 0));
  std::ifstream plain(file("plain.txt"));
  std::getline(plain, first);
  EXPECT_EQ(first, "# x y z vx vy vz m r");
}

TEST_F(TestParticleIoTest, TextAndCsvRefuseABadDirective) {
  auto refused = [&](const std::string& name, const std::string& content) {
    std::ofstream(file(name), std::ios::binary) << content;
    return error_of([&] { (void)read_particles(file(name), resolve_format(file(name), "")); });
  };
  const std::string p = file("b.txt").string(), c = file("b.csv").string();
  const std::string bodies = "0 0 0 0 0 0 1\n1 0 0 0 0 0 2\n";
  // The first line of b.txt before two bodies, and the message after "b.txt:1: ".
  const std::pair<const char*, const char*> bad_lines[] = {
      {"# nbody: n_active=3", "n_active 3 but the file holds 2 bodies"},
      {"# nbody: n_active=0", "n_active must be a whole number >= 1 (the active bodies), got '0'"},
      {"#nbody: n_active=1.5",
       "n_active must be a whole number >= 1 (the active bodies), got '1.5'"},
      {"# nbody: test_particle_type=2",
       "test_particle_type must be 0 (test particles feel the active bodies only) or 1 (they "
       "also pull on them), got '2'"},
      {"# nbody: n_active=1 n_active=1", "n_active given twice"},
      {"# nbody: nactive=1",
       "unknown key 'nactive=1' in '# nbody:' (n_active, test_particle_type)"},
      {"# nbody:", "'# nbody:' takes n_active=K and/or test_particle_type=T, found 0 fields"}};
  for (const auto& [line, message] : bad_lines)
    EXPECT_EQ(refused("b.txt", std::string(line) + "\n" + bodies), p + ":1: " + message);
  EXPECT_EQ(refused("b.txt", "0 0 0 0 0 0 1\n# nbody: n_active=1\n1 0 0 0 0 0 2\n"),
            p + ":2: '# nbody:' must come before the first body");
  EXPECT_EQ(
      refused("b.csv", "# nbody: n_active=1\n# nbody: test_particle_type=1\nx,y,z,vx,vy,vz,m\n"),
      c + ":2: a second '# nbody:' line (the first is line 1)");
  // Other comments are comments, whatever they say.
  std::ofstream(file("ok.txt")) << "# nbody run, by hand\n# nbody wrote this\n" << bodies;
  EXPECT_FALSE(read_text(file("ok.txt")).has_test_particles());
  // A test particle with mass, type 1, in a CSV file written by hand.
  std::ofstream(file("ok.csv")) << "# nbody: n_active=1 test_particle_type=1\n"
                                   "x,y,z,vx,vy,vz,m\n0,0,0,0,0,0,1\n1,0,0,0,0,0,2\n";
  const ParticleSystem ps = read_csv(file("ok.csv"));
  EXPECT_EQ(ps.n_active, 1U);
  EXPECT_EQ(ps.test_particle_type, 1);
}

TEST_F(TestParticleIoTest, TextAndCsvRefuseMassAfterTestParticlesNoMassAndNegativeMass) {
  auto refused = [&](const std::string& name, const std::string& content) {
    std::ofstream(file(name), std::ios::binary) << content;
    return error_of([&] { (void)read_particles(file(name), resolve_format(file(name), "")); });
  };
  const std::string p = file("a.txt").string(), c = file("a.csv").string();
  EXPECT_EQ(refused("a.txt", "0 0 0 0 0 0 1\n0 0 0 0 0 0 0\n1 0 0 0 0 0 0\n0 0 0 0 0 0 2\n"),
            p + ":4: column 7 (m): a body with mass after the test particles (mass 0 from line "
                "2): test particles come last");
  EXPECT_EQ(refused("a.csv", "x,y,z,vx,vy,vz,m\n0,0,0,0,0,0,0\n0,0,0,0,0,0,1e-300\n"),
            c + ":3: column 7 (m): a body with mass after the test particles (mass 0 from line "
                "2): test particles come last");
  EXPECT_EQ(refused("a.txt", "# none\n0 0 0 0 0 0 0\n1 1 1 0 0 0 -0\n"),
            p + ": no body has mass: test particles need at least one body with mass");
  EXPECT_EQ(refused("a.csv", "x,y,z,vx,vy,vz,m\n0,0,0,0,0,0,0\n"),
            c + ": no body has mass: test particles need at least one body with mass");
  EXPECT_EQ(refused("a.txt", "0 0 0 0 0 0 1\n0 0 0 0 0 0 -2\n"),
            p + ":2: column 7 (m): mass must be >= 0, got -2");
  EXPECT_EQ(refused("a.csv", "m,x,y,z,vx,vy,vz\n-1e-9,0,0,0,0,0,0\n"),
            c + ":2: column 1 (m): mass must be >= 0, got -1e-09");
}

}  // namespace
}  // namespace nbody
