// The one message style of bad input: values made safe to print and short.
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "nbody/input_error.hpp"

namespace {

TEST(InputError, NamesWhereWhatAndTheValue) {
  const nbody::Error e = nbody::input_error("--dt", "must be positive and finite", -1.0);
  EXPECT_STREQ(e.what(), "--dt: must be positive and finite (got -1)");
}

TEST(InputError, NumbersAreShortAndReadBack) {
  EXPECT_EQ(nbody::printable(std::numeric_limits<double>::max()), "1.7976931348623157e+308");
  EXPECT_EQ(nbody::printable(0.1), "0.1");
  EXPECT_EQ(nbody::printable(std::numeric_limits<double>::quiet_NaN()), "nan");
  EXPECT_EQ(nbody::printable(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(nbody::printable(std::uint64_t{18446744073709551615u}), "18446744073709551615");
}

TEST(InputError, ControlBytesAreEscaped) {
  EXPECT_EQ(nbody::printable("\x1b[31mRED\n"), "\\x1b[31mRED\\x0a");
  EXPECT_EQ(nbody::printable("a\\b"), "a\\\\b");
  EXPECT_EQ(nbody::printable("\xc3\xa9"), "\\xc3\\xa9");
}

TEST(InputError, LongValuesAreCut) {
  const std::string field(100000, 'x');
  const std::string shown = nbody::printable(field);
  EXPECT_LT(shown.size(), 100u);
  EXPECT_NE(shown.find("(100000 bytes)"), std::string::npos);
  const nbody::Error e = nbody::input_error("f.csv:1", "unknown column", field);
  EXPECT_LT(std::string(e.what()).size(), 200u);
}

}  // namespace
