#pragma once
// Shared by the particle file tests (test_io.cpp, test_io_atomic_write.cpp): the IoTest
// fixture, a folder of its own per test with helpers to write, read and list its files.
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "nbody/error.hpp"
#include "nbody/io.hpp"
#include "test_helpers.hpp"

namespace nbody::testing_io {

/// Each test gets its own empty folder, removed afterwards, so tests never see each
/// other's files (and can run in parallel under ctest).
class IoTest : public test::FolderTest {
 protected:
  IoTest() : FolderTest("io") {}

  std::filesystem::path write_raw(const std::string& name, const std::string& content) const {
    const std::filesystem::path p = file(name);
    std::ofstream(p, std::ios::binary) << content;
    return p;
  }

  static std::string slurp(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }

  std::vector<std::string> dir_entries() const {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(dir_))
      names.push_back(e.path().filename());
    return names;
  }

  /// Reads content as `name` and returns the nbody::Error message (fails if none).
  std::string read_error(const std::string& name, const std::string& content) const {
    const std::filesystem::path p = write_raw(name, content);
    try {
      (void)read_particles(p, resolve_format(p, ""));
    } catch (const Error& e) {
      return e.what();
    }
    ADD_FAILURE() << "reading " << name << " did not throw";
    return {};
  }
};

}  // namespace nbody::testing_io
