// nbody's own parameter lines (used_parameters_toml) read back without toml++
// (apply_written_parameters): how a build without toml++ restarts a checkpoint with the
// checkpoint's options. Runs in every build, with or without toml++.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "cli/config_file.hpp"
#include "config_test_command.hpp"
#include "nbody/error.hpp"

namespace nbody::cli {
namespace {

using config_test::Command;
using testing::HasSubstr;

TEST(WrittenParameters, ReadBackToTheSameValuesWithoutToml) {
  Command first;
  first.parse(
      "--steps 40 --dt 1e-2 --seed 18446744073709551615 --fields radius,acceleration --device gpu "
      "--gravity tree --quadrupole --center 0.5 -1 2 -o runs/a.txt");
  const std::string text = used_parameters_toml(*first.cmd, {"config"});
  Command second;
  second.parse("");
  const auto settings = apply_written_parameters(*second.cmd, text, "ck.h5");
  EXPECT_EQ(second.v, first.v) << text;
  EXPECT_FALSE(settings.empty());
  EXPECT_EQ(used_parameters_toml(*second.cmd, {"config"}), text);
}

TEST(WrittenParameters, DefaultsAreNamedButNotApplied) {
  Command c;
  c.parse("");
  const auto settings = apply_written_parameters(*c.cmd, "gravity = \"direct\"\nsteps = 3\n", "ck");
  ASSERT_EQ(settings.size(), 2u);
  EXPECT_FALSE(settings[0].applied);
  EXPECT_TRUE(settings[1].applied);
  EXPECT_EQ(c.v.steps, 3u);
}

TEST(WrittenParameters, OtherTextIsRefusedWithTheLine) {
  Command c;
  c.parse("");
  try {
    (void)apply_written_parameters(*c.cmd, "# a comment\nsteps: 3\n", "ck");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("ck:2"));
  }
  Command d;
  d.parse("");
  EXPECT_THROW((void)apply_written_parameters(*d.cmd, "nonsense = 1\n", "ck"), Error);
  Command f;
  f.parse("");
  EXPECT_THROW((void)apply_written_parameters(*f.cmd, "gravity = \"tre\n", "ck"), Error);
  Command g;
  g.parse("");
  EXPECT_THROW((void)apply_written_parameters(*g.cmd, "gravity = \"nope\"\n", "ck"), Error);
}

}  // namespace
}  // namespace nbody::cli
