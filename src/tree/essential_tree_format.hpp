#pragma once
// The bytes of an essential tree (essential_tree.cpp writes them, essential_tree_read.cpp
// checks and reads them): a Header, `cells` CellRecords breadth first (each followed by
// its Quadrupole when sent), `bodies` BodyRecords. Native byte order: the ranks of a run
// are one kind of machine.
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "nbody/physics/multipole.hpp"

namespace nbody::tree::let {

constexpr std::uint32_t kMagic = 0x3254454c;  // "LET2" (LET1: no flags)

/// The fixed part of a buffer; then `cells` CellRecords (each followed by its Quadrupole
/// when `quadrupole`), then `bodies` BodyRecords.
struct Header {
  std::uint32_t magic, dim, criterion, quadrupole;
  double root_x, root_y, root_z, root_half;
  std::uint64_t cells, bodies;
};
struct CellRecord {
  double comx, comy, comz, mass, cx, cy, cz, half, bmax;
  std::int32_t first_child;  // first child's record; -1 a leaf, Tree::kPrunedCell
  std::uint16_t child_count;
  std::uint16_t flags;       // kSilentCell or 0
  std::uint32_t begin, end;  // a leaf's bodies among the buffer's; 0, 0 otherwise
};
/// CellRecord::flags: a shared top cell that the receiver's walk accepts or opens as one
/// process would (its moments are the whole global cell's) but that adds nothing when
/// accepted: another rank's copy adds it (Tree::silent, parallel/shared_top_tree.hpp).
constexpr std::uint16_t kSilentCell = 1;
struct BodyRecord {
  double x, y, z, m;
};
using Quad = Quadrupole<double>;
static_assert(std::is_trivially_copyable_v<Header> && std::is_trivially_copyable_v<CellRecord> &&
              std::is_trivially_copyable_v<Quad>);

template <class T>
inline void put(std::vector<char>& out, const T& v) {
  const std::size_t at = out.size();
  out.resize(at + sizeof(T));
  std::memcpy(out.data() + at, &v, sizeof(T));
}

/// Reads T at `at` (bounds checked by the caller's size check).
template <class T>
inline T get(const std::vector<char>& in, std::size_t at) {
  T v;
  std::memcpy(&v, in.data() + at, sizeof(T));
  return v;
}

}  // namespace nbody::tree::let
