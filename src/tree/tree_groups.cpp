// Walk groups: the tree-ordered bodies cut into runs that share one interaction list
// (tree_walk.cpp).
//
// Why groups: the walk itself (pointer-free but branchy) costs about as much per visited
// cell as ~20 kernel interactions, so sharing one walk among ~30-60 bodies makes it
// negligible, and the kernel runs on long lists at full vector speed. The price is a
// longer list per body (the group test opens more): see the measurements in
// tree_solver.cpp. Measured split at N = 1e5 (perf): kernel 52%, walk + list filling 40%.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "tree/tree.hpp"

namespace nbody::tree {

void make_groups(const Tree& t, std::size_t max_group, std::vector<Group>& groups) {
  groups.clear();
  if (t.cells() == 0) return;
  max_group = std::max<std::size_t>(max_group, 1);
  auto emit_chunks = [&](std::uint32_t b, std::uint32_t e) {
    // A leaf at maximum depth may hold more than max_group bodies: cut it in chunks.
    for (std::uint32_t s = b; s < e; s += static_cast<std::uint32_t>(max_group)) {
      groups.push_back({s, static_cast<std::uint32_t>(std::min<std::size_t>(e, s + max_group))});
    }
  };
  std::vector<std::int32_t> stack{0};
  while (!stack.empty()) {
    const auto c = static_cast<std::size_t>(stack.back());
    stack.pop_back();
    if (t.end[c] - t.begin[c] <= max_group || t.is_leaf(c)) {
      emit_chunks(t.begin[c], t.end[c]);
      continue;
    }
    // Consecutive small children are merged while the run fits: siblings are adjacent in
    // tree order and share the parent's box. Without merging the octree's groups held 19
    // bodies on average (Plummer, max 64) and the kernel, padded to 32 targets, did
    // 1.9x the useful work.
    std::uint32_t run_b = 0, run_e = 0;
    const auto first = static_cast<std::size_t>(t.first_child[c]);
    for (std::size_t ch = first; ch < first + t.child_count[c]; ++ch) {
      const std::uint32_t count = t.end[ch] - t.begin[ch];
      if (count > max_group) {
        stack.push_back(static_cast<std::int32_t>(ch));
        continue;
      }
      if (run_e > run_b && run_e == t.begin[ch] && run_e - run_b + count <= max_group) {
        run_e = t.end[ch];
        continue;
      }
      if (run_e > run_b) emit_chunks(run_b, run_e);
      run_b = t.begin[ch];
      run_e = t.end[ch];
    }
    if (run_e > run_b) emit_chunks(run_b, run_e);
  }
}

void active_groups(const std::vector<Group>& groups, const std::vector<std::uint32_t>& positions,
                   std::uint32_t lanes, std::vector<Group>& out, std::vector<Group>* whole,
                   const std::function<bool(const Group&)>& keep) {
  out.clear();
  if (whole) whole->clear();
  lanes = std::max<std::uint32_t>(lanes, 1);
  for (const Group& g : groups) {
    if (keep && !keep(g)) continue;
    const auto first = std::lower_bound(positions.begin(), positions.end(), g.begin);
    if (first == positions.end() || *first >= g.end) continue;
    const auto last = std::lower_bound(first, positions.end(), g.end);
    // The range starts on the kernel's lane of the whole group (the same targets side by
    // side in the SIMD kernel, hence the same bits as the full walk).
    const std::uint32_t begin = g.begin + (*first - g.begin) / lanes * lanes;
    out.push_back(
        {begin, *(last - 1) + 1, static_cast<std::uint32_t>(last - first), g.begin, g.end});
    if (whole) whole->push_back(g);
  }
}

void store_active(const WalkOutput& w, const std::vector<std::uint32_t>& position,
                  const std::vector<std::uint32_t>& active, double G, int dim, bool potential,
                  ParticleSystem& ps) {
  for (const std::uint32_t i : active) {
    const std::size_t k = position[i];
    ps.ax[i] = G * w.ax[k];
    ps.ay[i] = G * w.ay[k];
    ps.az[i] = dim == 2 ? 0.0 : G * w.az[k];
    if (potential) ps.potential[i] = G * w.phi[k];
  }
}

}  // namespace nbody::tree
