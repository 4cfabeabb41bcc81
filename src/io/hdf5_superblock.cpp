// A check of a file's superblock, in its own bytes, before libhdf5 opens it.
//
// Why: H5Fopen of libhdf5 1.10 reads a version-0 or -1 superblock's driver information
// block with the size the block says it has, before anything else is checked: a 24 kB
// file whose driver-information address was flipped from "undefined" to a byte inside the
// file made it allocate 2.2 GB (a fuzz regression, found by a 480 s run of the hdf5
// target). Versions 2 and 3 carry a checksum that libhdf5 verifies first.
#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "io/hdf5_detail.hpp"
#include "nbody/error.hpp"

namespace nbody::hdf5::detail {

namespace {

std::uint64_t little(const unsigned char* p, std::size_t bytes) {
  std::uint64_t v = 0;
  for (std::size_t i = bytes; i-- > 0;) v = (v << 8) | p[i];
  return v;
}

constexpr std::array<unsigned char, 8> kSignature = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};

}  // namespace

void check_superblock_bytes(const std::string& path) {
  std::error_code ec;
  const std::uint64_t eof = std::filesystem::file_size(path, ec);
  std::ifstream in(path, std::ios::binary);
  if (ec || !in) return;  // File::open says why it cannot read the file
  auto read = [&](std::uint64_t offset, unsigned char* out, std::uint64_t bytes) {
    if (offset > eof || bytes > eof - offset) return false;
    in.clear();
    in.seekg(static_cast<std::streamoff>(offset));
    in.read(reinterpret_cast<char*>(out), static_cast<std::streamsize>(bytes));
    return static_cast<std::uint64_t>(in.gcount()) == bytes;
  };
  // The superblock is at 0 or after a user block of 512, 1024, 2048, ... bytes.
  std::array<unsigned char, 128> block{};
  std::uint64_t base = 0;
  for (;; base = base == 0 ? 512 : 2 * base) {
    if (base >= eof) return;  // no signature: H5Fopen refuses it
    if (read(base, block.data(), 8) && std::memcmp(block.data(), kSignature.data(), 8) == 0) break;
  }
  const auto bad = [&](const std::string& problem) {
    throw Error(fmt::format("{}: {} {}", path, problem, kCorrupt));
  };
  if (!read(base, block.data(), 24)) bad("its superblock is cut short");
  const unsigned version = block[8];
  if (version > 1) return;  // checksummed
  const unsigned sa = block[13], ss = block[14];
  if (sa != 2 && sa != 4 && sa != 8) bad(fmt::format("its superblock gives {}-byte addresses", sa));
  if (ss != 2 && ss != 4 && ss != 8) bad(fmt::format("its superblock gives {}-byte lengths", ss));
  const std::uint64_t fixed = version == 0 ? 24 : 28;
  if (!read(base, block.data(), fixed + 4ull * sa)) bad("its superblock is cut short");
  const std::uint64_t undefined = sa == 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << 8 * sa) - 1;
  const std::uint64_t base_address = little(&block[fixed], sa);
  const std::uint64_t driver = little(&block[fixed + 3ull * sa], sa);
  if (driver == undefined) return;
  // The driver information block: version, 3 reserved bytes, its size (4 bytes), the
  // driver's name (8 bytes), then that many bytes; it must lie inside the file.
  std::array<unsigned char, 16> head{};
  const std::uint64_t at = base_address + driver;
  if (at < driver || !read(at, head.data(), head.size()) || head[0] != 0) {
    bad(fmt::format("its driver information block at {} is not one", driver));
  }
  const std::uint64_t size = little(&head[4], 4);
  if (size > eof - at - head.size()) {
    bad(fmt::format("its driver information block claims {} bytes", size));
  }
}

}  // namespace nbody::hdf5::detail
