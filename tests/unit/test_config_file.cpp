// --config FILE: TOML values reach the options through CLI11 (its checks included), the
// command line wins, every bad file fails with FILE:LINE and the key, and the used-parameters
// document reads back to the same values.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli/config_file.hpp"
#include "cli/option_checks.hpp"
#include "config_test_command.hpp"
#include "nbody/error.hpp"
#include "test_helpers.hpp"

namespace nbody::cli {
namespace {

namespace fs = std::filesystem;
using testing::HasSubstr;
using testing::Not;

using config_test::Command;
using config_test::Values;

class ConfigFileTest : public nbody::test::FolderTest {
 protected:
  ConfigFileTest() : FolderTest("config") {}
  void SetUp() override {
#if !NBODY_HAVE_TOML
    GTEST_SKIP() << "built without toml++";
#endif
    FolderTest::SetUp();
  }

  fs::path write(const std::string& text, const std::string& name = "run.toml") const {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }

  /// Parses the command line, applies the file, returns the values.
  static Values applied(const fs::path& file, const std::string& command_line = "") {
    Command c;
    c.parse(command_line);
    apply_config_file(*c.cmd, file);
    return c.v;
  }

  /// The message of the nbody::Error that applying this file throws.
  std::string error_of(const std::string& text, const std::string& command_line = "",
                       const std::vector<std::string>& refused = {}) const {
    const fs::path file = write(text);
    Command c;
    c.parse(command_line);
    try {
      apply_config_file(*c.cmd, file, refused);
    } catch (const Error& e) {
      return e.what();
    }
    ADD_FAILURE() << "no error for:\n" << text;
    return {};
  }

  std::string where(int line) const {
    return (dir_ / "run.toml").string() + ":" + std::to_string(line) + ": ";
  }
};

TEST_F(ConfigFileTest, AppliesValuesOfEveryKind) {
  const fs::path file = write(
      "# a comment\n"
      "n = 500\n"
      "steps = 100\n"
      "dt = 0.02\n"
      "gravity = \"tree\"\n"
      "device = \"gpu\"\n"
      "quadrupole = true\n"
      "center = [1, 2.5, -3]\n"
      "fields = [\"radius\", \"potential\"]\n"
      "dim = 2\n"
      "output = \"out.txt\"\n");
  Command c;
  c.parse("");
  apply_config_file(*c.cmd, file);
  EXPECT_EQ(c.v.count, 500u);
  EXPECT_EQ(c.v.steps, 100u);
  EXPECT_EQ(c.v.dt, 0.02);
  EXPECT_EQ(c.v.gravity, "tree");
  EXPECT_TRUE(c.v.gpu);  // the option function's callback ran
  EXPECT_TRUE(c.v.quadrupole);
  EXPECT_EQ(c.v.center, (std::vector<double>{1, 2.5, -3}));
  EXPECT_EQ(c.v.fields, (std::vector<std::string>{"radius", "potential"}));
  EXPECT_EQ(c.v.dim, 2);
  EXPECT_EQ(c.v.output, "out.txt");
  // As if given: the run command tests count() ("needs --steps or --t-end").
  EXPECT_EQ(c.cmd->count("--steps"), 1u);
  EXPECT_EQ(c.cmd->count("--t-end"), 0u);
}

TEST_F(ConfigFileTest, UnderscoresNameDashedOptionsAndFloatsAreExact) {
  const Values v = applied(write("t_end = 0.1\ndt = 1e-3\nseed = \"18446744073709551615\"\n"));
  EXPECT_EQ(v.t_end, 0.1);
  EXPECT_EQ(v.dt, 1e-3);
  EXPECT_EQ(v.seed, 18446744073709551615u);
}

TEST_F(ConfigFileTest, ValuesEqualToTheDefaultLeaveTheOptionNotGiven) {
  Command c;
  c.parse("");
  apply_config_file(
      *c.cmd,
      write("dt = 0.01\ndim = 3\ndevice = \"cpu\"\nquadrupole = false\ngravity = \"tree\"\n"));
  EXPECT_EQ(c.cmd->count("--dt"), 0u);
  EXPECT_EQ(c.cmd->count("--dim"), 0u);
  EXPECT_EQ(c.cmd->count("--device"), 0u);
  EXPECT_EQ(c.cmd->count("--quadrupole"), 0u);
  EXPECT_EQ(c.cmd->count("--gravity"), 1u);
  Values expected;
  expected.gravity = "tree";
  EXPECT_EQ(c.v, expected);
}

TEST_F(ConfigFileTest, TheCommandLineWins) {
  const Values v =
      applied(write("dt = 0.02\ngravity = \"tree\"\nsteps = 3\n"), "--dt 0.5 --gravity direct");
  EXPECT_EQ(v.dt, 0.5);
  EXPECT_EQ(v.gravity, "direct");
  EXPECT_EQ(v.steps, 3u);
}

TEST_F(ConfigFileTest, OptionsExcludedByTheCommandLineAreSkipped) {
  Command c;
  c.parse("--t-end 5");
  apply_config_file(*c.cmd, write("steps = 100\ndt = 0.5\n"));
  EXPECT_EQ(c.v.t_end, 5.0);
  EXPECT_EQ(c.v.steps, 0u);
  EXPECT_EQ(c.cmd->count("--steps"), 0u);
  EXPECT_EQ(c.v.dt, 0.5);
  EXPECT_EQ(applied(write("t-end = 9.0\n"), "--steps 7").t_end, 0.0);  // the other direction
}

TEST_F(ConfigFileTest, ExcludingKeysInOneFileAreAnError) {
  const std::string msg = error_of("steps = 100\nt-end = 5.0\n");
  EXPECT_THAT(msg, HasSubstr(where(2)));
  EXPECT_THAT(msg, HasSubstr("t-end and steps (line 1) exclude each other"));
  EXPECT_THAT(error_of("t-end = 1.0\nt_end = 2.0\n"),
              HasSubstr("t_end: --t-end is already set on line 1 (t-end)"));
}

TEST_F(ConfigFileTest, UnknownKeySuggestsTheClosestOption) {
  const std::string msg = error_of("dt = 0.1\nstpes = 3\n");
  EXPECT_THAT(msg, HasSubstr(where(2) + "unknown key 'stpes' (nbody run has no option --stpes)"));
  EXPECT_THAT(msg, HasSubstr("did you mean 'steps'?"));
  EXPECT_THAT(error_of("softening_length = 1\n"), Not(HasSubstr("did you mean")));
}

TEST_F(ConfigFileTest, WrongTypesNameTheKeyAndWhatTheOptionTakes) {
  EXPECT_EQ(error_of("\n# length\nsteps = 0.5\n"),
            where(3) + "steps: expects a non-negative integer (got 0.5)");
  EXPECT_EQ(error_of("steps = -5\n"), where(1) + "steps: expects a non-negative integer (got -5)");
  EXPECT_THAT(error_of("dt = \"0.1\"\n"), HasSubstr("dt: expects a number (got \"0.1\")"));
  EXPECT_THAT(error_of("quadrupole = \"yes\"\n"),
              HasSubstr("quadrupole: expects true or false (got \"yes\")"));
  EXPECT_THAT(error_of("gravity = 3\n"), HasSubstr("gravity: expects a string (got 3)"));
  EXPECT_THAT(error_of("dim = [2]\n"), HasSubstr("dim: expects an integer (got [2])"));
  EXPECT_THAT(error_of("center = [1, \"a\", 3]\n"),
              HasSubstr("center: expects an array of numbers (got [1, \"a\", 3])"));
  EXPECT_THAT(error_of("center = [1.0, 2.0]\n"),
              HasSubstr("center: expects at least 3 value(s) (got [1.0, 2.0])"));
}

TEST_F(ConfigFileTest, InvalidValuesNameTheFileLineAndKey) {
  EXPECT_EQ(error_of("n = 10\ngravity = \"fast\"\n"),
            where(2) + "gravity: must be one of direct, tree (got fast)");
  EXPECT_EQ(error_of("dt = -1.0\n"), where(1) + "dt: must be a number > 0 (got -1)");
  EXPECT_EQ(error_of("dim = 4\n"), where(1) + "dim: must be one of 2, 3 (got 4)");
  EXPECT_EQ(error_of("fields = [\"radius\", \"mass\"]\n"),
            where(1) + "fields: must be one of radius, acceleration, potential (got mass)");
  EXPECT_EQ(error_of("n = 0\n"), where(1) + "n: must be a whole number >= 1 (got 0)");
}

TEST_F(ConfigFileTest, InvalidNonFiniteAndEmptyValuesAreRefused) {
  EXPECT_EQ(error_of("t-end = inf\n"), where(1) + "t-end: must be a finite number (got inf)");
  EXPECT_EQ(error_of("\nt_end = nan\n"), where(2) + "t_end: must be a finite number (got nan)");
  EXPECT_EQ(error_of("dt = 0.5\nt-end = -inf\n"),
            where(2) + "t-end: must be a finite number (got -inf)");
  EXPECT_EQ(error_of("output = \"\"\n"), where(1) + "output: must not be empty (got '')");
  EXPECT_EQ(error_of("output = \"a\\u001bb\"\n"),
            where(1) + "output: must not contain control characters (got a\\x1bb)");
  EXPECT_EQ(error_of("seed = \"18446744073709551616\"\n"),
            where(1) +
                "seed: must be a whole number from 0 to 18446744073709551615 (got "
                "18446744073709551616)");
}

// toml++ 3.3 reached undefined behaviour on a non-ASCII bare key (UBSan: "unreachable program
// point"): such bytes are refused before toml++ sees the text, with the line.
TEST_F(ConfigFileTest, InvalidNonAsciiKeysAreRefusedBeforeToml) {
  EXPECT_EQ(error_of("steps = 1\n\xc3\xa9t\xc3\xa9 = 2\n"),
            where(2) +
                "a non-ASCII byte outside a string or comment (keys are option names, in ASCII) "
                "(got \\xc3)");
  EXPECT_THAT(error_of("steps = 1 \xe2\x80\x83\n"), HasSubstr(where(1) + "a non-ASCII byte"));
  EXPECT_THAT(error_of("dt = 0.1\nsteps\xc2\xa0= 1\n"), HasSubstr(where(2) + "a non-ASCII byte"));
  // In strings and comments any UTF-8 is fine; a quoted key is an unknown key, escaped.
  const Values v =
      applied(write("# \xc3\xa9t\xc3\xa9\noutput = \"r\xc3\xa9s/a.txt\" # \xc3\xa9\n"
                    "gravity = 'tree' # '''\xc3\xa9\n"
                    "fields = \"\"\"radius\"\"\"\n"));
  EXPECT_EQ(v.output, "r\xc3\xa9s/a.txt");
  EXPECT_EQ(v.gravity, "tree");
  EXPECT_EQ(v.fields, std::vector<std::string>{"radius"});
  EXPECT_THAT(error_of("\"\xc3\xa9\" = 1\n"), HasSubstr(where(1) + "unknown key '\\xc3\\xa9'"));
  // toml++ reads only ASCII: UTF-8 in "..." strings goes as \u escapes (4-byte ones too) and
  // reads back the same; elsewhere, or not UTF-8, it is refused (fuzz regressions).
  EXPECT_EQ(applied(write("output = \"\xf0\x9f\x8c\x8c\xc3\xa9.txt\"\n")).output,
            "\xf0\x9f\x8c\x8c\xc3\xa9.txt");
  EXPECT_THAT(error_of("output = 'r\xc3\xa9s.txt'\n"),
              HasSubstr(where(1) + "a non-ASCII byte in a '...' string"));
  EXPECT_THAT(error_of("output = \"r\xc3.txt\"\n"),
              HasSubstr(where(1) + "a non-ASCII byte that is not UTF-8"));
  EXPECT_THAT(error_of("output = \"r\\\xc3\xa9\"\n"),
              HasSubstr(where(1) + "a non-ASCII byte after a backslash"));
  EXPECT_THAT(error_of("n =1i40049\"\xc3\xa9t\xc3\xa9\"\n"), HasSubstr(where(1)));
}

TEST_F(ConfigFileTest, WrongValuesFoundWhenTheRunStartsNameTheFileAndLine) {
  Command c;
  c.parse("");
  const auto settings = apply_config_file(*c.cmd, write("steps = 3\n\ndt = 0.5\n"));
  ASSERT_EQ(settings.size(), 2u);
  const std::string file = (dir_ / "run.toml").string();
  // The library's "--NAME: WHAT (got VALUE)" names the file, line and key instead.
  EXPECT_EQ(
      std::string(blamed_on_config(Error("--dt: too large (got 0.5)"), settings, file).what()),
      where(3) + "dt: too large (got 0.5)");
  EXPECT_EQ(
      std::string(blamed_on_config(Error("--steps: too many (got 3)"), settings, file).what()),
      where(1) + "steps: too many (got 3)");
  // An option the file did not set is left as it is.
  EXPECT_STREQ(blamed_on_config(Error("--seed: odd (got 4)"), settings, file).what(),
               "--seed: odd (got 4)");
}

TEST_F(ConfigFileTest, ADefaultValueIsNamedButNotApplied) {
  // --restart must know that the file named gravity, though its value is the default and
  // CLI11 does not count it: the checkpoint's value then does not replace it silently.
  Command c;
  c.parse("");
  const auto settings = apply_config_text(*c.cmd, "gravity = \"direct\"\nsteps = 3\n", "ck");
  ASSERT_EQ(settings.size(), 2u);
  EXPECT_EQ(settings[0].key, "gravity");
  EXPECT_FALSE(settings[0].applied);
  EXPECT_EQ(c.cmd->get_option("--gravity")->count(), 0u);
  EXPECT_TRUE(settings[1].applied);
  EXPECT_EQ(c.v.steps, 3u);
}

TEST_F(ConfigFileTest, SyntaxErrorsGiveTheLine) {
  const std::string msg = error_of("steps = 10\ndt = = 0.1\n");
  EXPECT_THAT(msg, HasSubstr(where(2)));
  EXPECT_GT(msg.size(), where(2).size());  // toml++'s description follows
}

TEST_F(ConfigFileTest, UnreadableFilesAreNamed) {
  const fs::path missing = dir_ / "missing.toml";
  Command c;
  c.parse("");
  try {
    apply_config_file(*c.cmd, missing);
    ADD_FAILURE() << "no error for a missing file";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(),
                HasSubstr(missing.string() + ": cannot open the config file (No such file"));
  }
  try {
    apply_config_file(*c.cmd, dir_);
    ADD_FAILURE() << "no error for a folder";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr(dir_.string() + ": cannot"));
  }
}

TEST_F(ConfigFileTest, TablesNestingAndRefusedKeysAreErrors) {
  EXPECT_THAT(error_of("dt = 0.1\n[gravity]\ntheta = 0.5\n"),
              HasSubstr(where(2) + "[gravity]: tables are not read"));
  EXPECT_THAT(error_of("gravity.theta = 0.5\n"), HasSubstr("top level"));
  EXPECT_THAT(error_of("config = \"other.toml\"\n"),
              HasSubstr(where(1) + "config: a config file cannot name another one"));
  EXPECT_THAT(error_of("help = true\n"),
              HasSubstr(where(1) + "help: not an option for a config file"));
  EXPECT_THAT(error_of("o = \"x.txt\"\n", "", {"output"}),
              HasSubstr(where(1) + "o: --output is not read from a config file"));
}

TEST_F(ConfigFileTest, UsedParametersReadBackToTheSameValues) {
  Command first;
  first.parse(
      "--steps 40 --dt 1e-2 --seed 18446744073709551615 --fields radius,acceleration --device gpu");
  apply_config_file(*first.cmd,
                    write("gravity = \"tree\"\ncenter = [0.5, -1, 2]\nquadrupole = true\n"
                          "output = 'runs/a \"b\"\\c d.txt'\n"));
  const std::string text = used_parameters_toml(*first.cmd, {"config"});

  // Typed values, described, and comments for what has no value.
  EXPECT_THAT(text, HasSubstr("# Time step\ndt = 0.01\n"));
  EXPECT_THAT(text, HasSubstr("\nsteps = 40\n"));
  EXPECT_THAT(text, HasSubstr("\n# t-end: not used (excluded by --steps)\n"));
  EXPECT_THAT(text, HasSubstr("\ncount = 1000\n"));
  EXPECT_THAT(text, HasSubstr("\nseed = \"18446744073709551615\"\n"));  // above TOML's int64
  EXPECT_THAT(text, HasSubstr("\ngravity = \"tree\"\n"));
  EXPECT_THAT(text, HasSubstr("\ndevice = \"gpu\"\n"));
  EXPECT_THAT(text, HasSubstr("\nquadrupole = true\n"));
  EXPECT_THAT(
      text, HasSubstr("# Centre of the system:\n# three coordinates\ncenter = [0.5, -1.0, 2.0]\n"));
  EXPECT_THAT(text, HasSubstr("\nfields = [\"radius\", \"acceleration\"]\n"));
  EXPECT_THAT(text, HasSubstr("\ndim = 3\n"));
  EXPECT_THAT(text, HasSubstr("\noutput = \"runs/a \\\"b\\\"\\\\c d.txt\"\n"));  // escaped
  EXPECT_THAT(text, Not(HasSubstr("\nconfig")));
  EXPECT_THAT(text, Not(HasSubstr("help")));

  Command second;
  second.parse("");
  apply_config_file(*second.cmd, write(text, "used_parameters.toml"));
  EXPECT_EQ(second.v, first.v) << text;
  EXPECT_EQ(used_parameters_toml(*second.cmd, {"config"}), text);  // and the document again
}

TEST_F(ConfigFileTest, UsedParametersOfDefaultsReadBack) {
  Command first;
  first.parse("--t-end 2.5");
  const std::string text = used_parameters_toml(*first.cmd, {"config"});
  EXPECT_THAT(text, HasSubstr("\nquadrupole = false\n"));
  EXPECT_THAT(text, HasSubstr("\n# steps: not used (excluded by --t-end)\n"));
  EXPECT_THAT(text, HasSubstr("\n# center: not set\n"));
  EXPECT_THAT(text, HasSubstr("\n# output: not set\n"));
  Command second;
  second.parse("");
  apply_config_file(*second.cmd, write(text));
  EXPECT_EQ(second.v, first.v) << text;
}

}  // namespace
}  // namespace nbody::cli
