// The shared top tree (parallel/shared_top_tree.hpp) on P = 2..4 thread ranks: the ranks'
// trees together have one process's cells, every cell that several ranks' bodies share gets
// the moments of one process's cell (mass, centre of mass and quadrupole to rounding, b_max
// no smaller than the cell's true reach), exactly one copy of it adds it (the others
// silent), and a cell of one rank's bodies is one process's.
// Both with the bodies dealt out (every cell shared) and cut along the key line (the cells
// around the cuts).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "domain_test_helpers.hpp"
#include "parallel/domain.hpp"
#include "parallel/shared_top_tree.hpp"
#include "thread_ranks.hpp"
#include "tree/tree.hpp"

namespace nbody {
namespace {

using CellId = std::pair<int, std::uint64_t>;  // level, key prefix

CellId id_of(const tree::Tree& t, std::size_t c) {
  const int shift = t.dim * (tree::key_bits_per_axis(t.dim) - t.level[c]);
  return {t.level[c], shift >= 64 ? 0 : t.keys[t.begin[c]] >> shift};
}

/// What one rank's tree says of a cell after share_top_cells.
struct Copy {
  int rank;
  double mass, comx, comy, comz, bmax;
  Quadrupole<double> quad;
  bool silent, leaf;
};

void check(const ParticleSystem& all, int dim, int parts, bool cut_along_keys,
           parallel::DomainCurve curve = parallel::DomainCurve::Morton) {
  const tree::RootCube cube = [&] {
    double lo[3], hi[3];
    tree::body_bounds(all, dim, 1, lo, hi);
    return tree::root_cube_from_bounds(lo, hi);
  }();
  tree::Tree one;
  tree::BuildScratch scratch;
  tree::build_tree(all, dim, tree::kLeafSize, 1, cube, one, scratch);
  tree::compute_moments(one, true);
  std::map<CellId, std::size_t> one_cells;
  for (std::size_t c = 0; c < one.cells(); ++c) one_cells[id_of(one, c)] = c;

  const auto copies = testing::run_parts<std::vector<std::pair<CellId, Copy>>>(
      parts, [&](std::shared_ptr<ForceReducer> comm) {
        ParticleSystem mine = testing::dealt_share(all, comm->part(), comm->parts());
        if (cut_along_keys) {
          const parallel::KeyCube kc{cube.x, cube.y, cube.z, cube.half};
          std::vector<std::uint64_t> keys = parallel::domain_keys(mine, dim, kc, 1, curve);
          const parallel::DomainCuts cuts = parallel::balance(keys, {}, dim, *comm);
          (void)parallel::migrate(mine, keys, nullptr, cuts, *comm);
        }
        tree::Tree t;
        tree::BuildScratch s;
        tree::build_tree(mine, dim, tree::kLeafSize, 1, cube, t, s);
        tree::compute_moments(t, true);
        const std::size_t shared = parallel::share_top_cells(t, *comm, curve);
        EXPECT_GT(shared, 0u);
        std::vector<std::pair<CellId, Copy>> out;
        for (std::size_t c = 0; c < t.cells(); ++c) {
          const bool silent = !t.silent.empty() && t.silent[c] != 0;
          out.push_back({id_of(t, c),
                         {comm->part(), t.mass[c], t.comx[c], t.comy[c], t.comz[c], t.bmax[c],
                          t.quad[c], silent, t.is_leaf(c)}});
          // The walk's record: a silent cell adds nothing, the others their mass.
          EXPECT_EQ(t.walk_nodes[c].mass, silent ? 0.0 : t.mass[c]);
        }
        return out;
      });
  std::map<CellId, std::vector<Copy>> by_cell;
  for (const auto& rank : copies)
    for (const auto& [id, copy] : rank) by_cell[id].push_back(copy);
  // Together the ranks' trees have exactly one process's cells (a shared cell that a rank
  // held as a leaf of its few bodies is split there as one process splits it).
  EXPECT_EQ(by_cell.size(), one.cells());
  std::size_t shared = 0;
  for (const auto& [id, list] : by_cell) {
    ASSERT_TRUE(one_cells.count(id)) << "a cell one process's tree does not have";
    const std::size_t c = one_cells.at(id);
    const auto adding =
        std::count_if(list.begin(), list.end(), [](const Copy& k) { return !k.silent; });
    EXPECT_EQ(adding, 1) << "level " << id.first << ": " << list.size() << " copies";
    shared += list.size() > 1 ? 1 : 0;
    const double scale = one.half[0];
    for (const Copy& k : list) {
      EXPECT_NEAR(k.mass, one.mass[c], 1e-13 * one.mass[0])
          << "level " << id.first << " prefix " << id.second << ", rank " << k.rank << " of "
          << list.size() << " copies";
      EXPECT_NEAR(k.comx, one.comx[c], 1e-13 * scale);
      EXPECT_NEAR(k.comy, one.comy[c], 1e-13 * scale);
      EXPECT_NEAR(k.comz, one.comz[c], 1e-13 * scale);
      const double q = 1e-12 * one.mass[0] * scale * scale;
      EXPECT_NEAR(k.quad.xx, one.quad[c].xx, q);
      EXPECT_NEAR(k.quad.xy, one.quad[c].xy, q);
      EXPECT_NEAR(k.quad.yz, one.quad[c].yz, q);
      EXPECT_NEAR(k.quad.tr, one.quad[c].tr, q);
      // b_max bounds the reach of every body of the cell from its centre of mass.
      double reach = 0;
      for (std::uint32_t b = one.begin[c]; b < one.end[c]; ++b)
        reach = std::max(reach, std::hypot(one.x[b] - one.comx[c], one.y[b] - one.comy[c],
                                           one.z[b] - one.comz[c]));
      EXPECT_GE(k.bmax, reach * (1 - 1e-12));
    }
  }
  std::printf(
      "[ measured ] %dD, %d ranks, %s%s: %zu of one process's %zu cells held by several ranks\n",
      dim, parts, cut_along_keys ? "cut along the keys" : "dealt out",
      curve == parallel::DomainCurve::Hilbert ? " (Hilbert)" : "", shared, one.cells());
  // Cut along the curve, the shared cells are those around the cuts: a few per level.
  if (cut_along_keys) {
    EXPECT_LE(shared, std::size_t(parts) * 4 * 31);
  }
  EXPECT_GT(shared, 0u);
}

TEST(SharedTopTree, SharedCellsAreOneProcessesCells) {
  for (const int dim : {3, 2}) {
    const ParticleSystem all = testing::plummer_sphere(3000, dim, 7);
    for (const int parts : {2, 3, 4}) {
      check(all, dim, parts, true);
      check(all, dim, parts, false);
      check(all, dim, parts, true, parallel::DomainCurve::Hilbert);
    }
  }
}

// Too many candidates on some rank (bodies dealt out: every cell is one): every rank gives up
// together, and its tree stays its own (no cell silent, the moments its bodies').
TEST(SharedTopTree, TooManyCandidatesLeaveEveryTreeItsOwn) {
  const ParticleSystem all = testing::plummer_sphere(3000, 3, 7);
  double lo[3], hi[3];
  tree::body_bounds(all, 3, 1, lo, hi);
  const tree::RootCube cube = tree::root_cube_from_bounds(lo, hi);
  const auto shared = testing::run_parts<std::size_t>(3, [&](std::shared_ptr<ForceReducer> comm) {
    const ParticleSystem mine = testing::dealt_share(all, comm->part(), comm->parts());
    tree::Tree t, own;
    tree::BuildScratch s;
    tree::build_tree(mine, 3, tree::kLeafSize, 1, cube, t, s);
    tree::compute_moments(t, false);
    own = t;
    const std::size_t n = parallel::share_top_cells(t, *comm, parallel::kDefaultCurve, 100);
    EXPECT_TRUE(t.silent.empty());
    EXPECT_EQ(t.mass, own.mass);
    EXPECT_EQ(t.comx, own.comx);
    return n;
  });
  for (const std::size_t n : shared) EXPECT_EQ(n, 0u);
}

}  // namespace
}  // namespace nbody
