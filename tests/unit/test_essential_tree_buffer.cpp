// Essential trees as bytes (src/tree/essential_tree.hpp): malformed buffers rejected, a far
// domain's tree small, the sizes and times the report quotes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "essential_tree_domains.hpp"
#include "nbody/error.hpp"
#include "nbody/force_error.hpp"
#include "tree/essential_tree.hpp"
#include "tree/tree.hpp"

namespace nbody::tree {
namespace {

using namespace testing;

/// Two Plummer spheres (clipped to 10 scale radii) `apart` along z, whose keys' top digit
/// tells apart.
ParticleSystem two_spheres(std::size_t n, double apart) {
  ParticleSystem ps = plummer(n, 3);
  for (std::size_t i = 0; i < ps.size(); ++i) {
    for (auto* v : {&ps.x, &ps.y, &ps.z}) (*v)[i] = std::clamp((*v)[i], -10.0, 10.0);
    ps.z[i] += i % 2 ? apart / 2 : -apart / 2;
  }
  return ps;
}

/// The essential tree of one of two spheres 25 apart for the other (N = 2000): opened
/// cells, pruned cells and leaves.
std::vector<char> sample_buffer(bool quad) {
  const ParticleSystem ps = two_spheres(2000, 25);
  const RootCube cube = global_cube(ps, 3);
  const auto dom = domains(ps, 3, cube, 2, 1);
  Settings s{3, OpeningCriterion::Geometric, quad};
  std::vector<Walkable> w(2);
  BuildScratch scratch;
  for (std::size_t p = 0; p < 2; ++p) {
    ParticleSystem sub;
    sub.resize(dom[p].size());
    for (std::size_t k = 0; k < dom[p].size(); ++k) {
      const std::size_t i = dom[p][k];
      sub.x[k] = ps.x[i], sub.y[k] = ps.y[i], sub.z[k] = ps.z[i], sub.mass[k] = ps.mass[i];
    }
    build_tree(sub, 3, kLeaf, 0, cube, w[p].t, scratch);
    prepare(w[p], s, OpeningCriterion::Geometric, {}, dom[p]);
  }
  return essential_tree(w[0].t, receiver_boxes(w[1].t, w[1].groups, nullptr, 16),
                        options_for(s, w[0]));
}

// The buffer's layout (essential_tree.cpp): a 64-byte header (cells at 48, bodies at 56),
// then 88-byte cell records (first_child at 72, child_count at 76 and flags at 78, 16 bits each,
// begin/end at 80/84), each followed by 56 bytes of quadrupole when sent, then 32-byte bodies.
template <class T>
void poke(std::vector<char>& b, std::size_t at, T v) {
  std::memcpy(b.data() + at, &v, sizeof v);
}

TEST(EssentialTreeBuffer, MalformedBuffersThrow) {
  const std::vector<char> good = sample_buffer(false);
  const Tree t = read_essential_tree(good);
  const EssentialTreeCounts n = essential_tree_counts(t, good.size());
  std::printf("sample: %zu cells, %zu pruned, %zu leaves, %zu bodies\n", n.cells, n.pruned,
              n.leaves, n.bodies);
  ASSERT_GT(n.pruned, 0u);
  ASSERT_GT(n.leaves, 0u);
  ASSERT_EQ(good.size(), 64 + 88 * n.cells + 32 * n.bodies);
  auto bad = [&](auto change) {
    std::vector<char> b = good;
    change(b);
    return b;
  };
  for (const std::size_t cut :
       {std::size_t(0), std::size_t(63), std::size_t(64), good.size() - 1, good.size() - 32}) {
    EXPECT_THROW((void)read_essential_tree(
                     std::vector<char>(good.begin(), good.begin() + std::ptrdiff_t(cut))),
                 Error)
        << cut;
  }
  EXPECT_THROW((void)read_essential_tree(bad([](auto& b) { b.push_back(0); })), Error);
  EXPECT_THROW((void)read_essential_tree(bad([](auto& b) { poke<std::uint32_t>(b, 0, 7); })),
               Error);
  EXPECT_THROW((void)read_essential_tree(bad([](auto& b) { poke<std::uint32_t>(b, 4, 4); })),
               Error);
  EXPECT_THROW((void)read_essential_tree(bad([](auto& b) { poke<std::uint32_t>(b, 8, 9); })),
               Error);
  EXPECT_THROW(
      (void)read_essential_tree(bad([&](auto& b) { poke<std::uint64_t>(b, 48, n.cells + 1); })),
      Error);
  EXPECT_THROW(
      (void)read_essential_tree(bad([&](auto& b) { poke<std::uint64_t>(b, 56, n.bodies - 1); })),
      Error);
  EXPECT_THROW((void)read_essential_tree(
                   bad([&](auto& b) { poke<std::uint64_t>(b, 48, ~std::uint64_t(0) / 8); })),
               Error);
  // The root's children out of range, overlapping the root, or too many.
  EXPECT_THROW((void)read_essential_tree(
                   bad([&](auto& b) { poke<std::int32_t>(b, 64 + 72, std::int32_t(n.cells)); })),
               Error);
  EXPECT_THROW((void)read_essential_tree(bad([&](auto& b) { poke<std::int32_t>(b, 64 + 72, 0); })),
               Error);
  EXPECT_THROW((void)read_essential_tree(bad([&](auto& b) { poke<std::uint32_t>(b, 64 + 76, 9); })),
               Error);
  EXPECT_THROW((void)read_essential_tree(bad([&](auto& b) { poke<std::int32_t>(b, 64 + 72, -3); })),
               Error);
  // Flags other than kSilentCell (bit 0).
  EXPECT_THROW((void)read_essential_tree(bad([&](auto& b) { poke<std::uint16_t>(b, 64 + 78, 2); })),
               Error);
  EXPECT_NO_THROW(
      (void)read_essential_tree(bad([&](auto& b) { poke<std::uint16_t>(b, 64 + 78, 1); })));
  EXPECT_THROW((void)read_essential_tree(bad([&](auto& b) { poke<double>(b, 64 + 24, NAN); })),
               Error);
  EXPECT_THROW(
      (void)read_essential_tree(bad([&](auto& b) { poke<double>(b, b.size() - 8, INFINITY); })),
      Error);
  // Any single corrupted byte or word: an Error or a tree, never a crash.
  std::mt19937 rng(5);
  int thrown = 0;
  for (int k = 0; k < 3000; ++k) {
    std::vector<char> b = good;
    const std::size_t at = rng() % (b.size() - 3);
    poke<std::uint32_t>(b, at, static_cast<std::uint32_t>(rng()) >> (rng() % 32));
    try {
      const Tree r = read_essential_tree(b);
      EXPECT_EQ(r.walk_nodes.size(), r.cells());
    } catch (const Error&) {
      ++thrown;
    }
  }
  EXPECT_GT(thrown, 100);
  // The walk refuses sources it cannot use.
  const Tree quads = read_essential_tree(sample_buffer(true));
  WalkOptions o;
  o.quadrupole = true;
  WalkOutput out;
  EXPECT_THROW(walk_forces<float>(quads, {}, t, o, false, out), Error) << "no quadrupoles";
  o.mac = OpeningCriterion::Bmax;
  EXPECT_THROW(walk_forces<float>(quads, {}, quads, o, false, out), Error) << "criterion";
  EXPECT_THROW((void)read_receiver_boxes(std::vector<char>(3)), Error);
  std::vector<char> boxes = receiver_boxes_bytes({ReceiverBox{}, ReceiverBox{}});
  EXPECT_EQ(read_receiver_boxes(boxes).size(), 2u);
  poke<double>(boxes, sizeof(ReceiverBox) + 8, NAN);
  EXPECT_THROW((void)read_receiver_boxes(boxes), Error);
}

TEST(EssentialTreeBuffer, FarDomainSendsLittle) {
  // Two Plummer spheres (clipped to 10 scale radii) 200 apart along z, whose keys' top
  // digit tells apart: one per domain. Each sends the other a few cells and no bodies.
  const ParticleSystem ps = two_spheres(4000, 200);
  const Settings s{3, OpeningCriterion::Geometric, true};
  for (const std::size_t boxes : {std::size_t(1), std::size_t(64)}) {
    const Forces f = decomposed(ps, s, {}, 2, 1, boxes);
    std::printf("far domains, %zu boxes: %llu cells, %llu bodies, %llu bytes for 4000 bodies\n",
                boxes, static_cast<unsigned long long>(f.let_cells),
                static_cast<unsigned long long>(f.let_bodies),
                static_cast<unsigned long long>(f.let_bytes));
    EXPECT_EQ(f.let_bodies, 0u);
    EXPECT_LE(f.let_cells, 2u * 20);
    EXPECT_EQ(f.forced, 0u);
  }
}

TEST(EssentialTreeBuffer, SizesAndTimesAtFiftyThousand) {
  // What the report quotes: bytes sent per body, building the trees against
  // walking, with one box per receiver, 64, and one per group (the default above). Each
  // group's interaction list is the same whatever the boxes (they only prune what no group
  // opens), so the forces are the same bits.
  const ParticleSystem ps = plummer(50000, 3);
  const Settings s{3, OpeningCriterion::Geometric, false};
  for (const int parts : {2, 4}) {
    std::vector<Forces> runs;
    for (const std::size_t boxes : {std::size_t(1), std::size_t(64), SIZE_MAX}) {
      runs.push_back(decomposed(ps, s, {}, parts, 12, boxes));
      const Forces& f = runs.back();
      std::printf(
          "N 50000 P=%d, %zu boxes (0: one per group): LETs %.1f bytes/body (%llu cells, %llu "
          "bodies), "
          "build+read %.1f ms, walks %.1f ms\n",
          parts, boxes == SIZE_MAX ? 0 : boxes, double(f.let_bytes) / double(ps.size()),
          static_cast<unsigned long long>(f.let_cells),
          static_cast<unsigned long long>(f.let_bodies), 1e3 * f.let_seconds, 1e3 * f.walk_seconds);
      EXPECT_EQ(f.forced, 0u);
      EXPECT_EQ(f.ax, runs[0].ax);
      EXPECT_EQ(f.phi, runs[0].phi);
    }
    EXPECT_LT(runs.back().let_bytes, runs[0].let_bytes * 3 / 4);
  }
}

}  // namespace
}  // namespace nbody::tree
