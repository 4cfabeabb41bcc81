// The CPU Barnes-Hut solver: build (tree_build.cpp, or tree_insertion_build.cpp with
// --tree-build insertion), moments (tree_moments.cpp), group
// walk with the SIMD kernel (tree_walk.cpp), accelerations scattered back to the
// particle system's order and multiplied by G. compute_forces_active (hierarchical time
// steps) builds the same tree and walks only the groups that hold active bodies, each
// shrunk to the range of its active bodies.
//
// Parameters, measured on Plummer N = 100000, theta = 0.5, float, 1 thread, Zen 3 (a
// loaded machine, so +-15%): max group 32 / 64 / 96 gave walks of 510 / 370 / 360 ms with
// 2821 / 3214 / 3533 interactions per body (smaller groups repeat the walk more often,
// larger ones lengthen every body's list); leaf size 4 / 8 / 12 / 16 gave 389 / 370 /
// 382 / 398 ms. 64 is kept over 96 for the shorter lists (the double kernel is 2.7x
// slower per pair, so the list length matters more there).
#include "tree/tree_solver.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "gravity/direct_simd_kernels.hpp"
#include "nbody/error.hpp"
#include "nbody/input_error.hpp"
#include "tree/tree.hpp"

namespace nbody {
namespace {

using tree::kLeafSize;
using tree::kMaxGroup;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

template <class Real>
class TreeSolver final : public GravitySolver {
 public:
  explicit TreeSolver(const GravityOptions& o) : options_(o) {}

  [[nodiscard]] std::string name() const override {
    return fmt::format(
        "tree-{}-{}{}{}{}", options_.dim == 2 ? "quadtree" : "octree",
        std::is_same_v<Real, float> ? "float" : "double", options_.quadrupole ? "-quadrupole" : "",
        options_.mac == OpeningCriterion::Geometric ? ""
                                                    : fmt::format("-{}", to_string(options_.mac)),
        options_.tree_build == TreeBuild::Morton
            ? ""
            : fmt::format("-{}", to_string(options_.tree_build)));
  }

  void compute_forces(ParticleSystem& ps, bool potential) override {
    const std::size_t n = ps.size();
    const bool relative = take_old_accelerations(ps);
    for (auto* a : {&ps.ax, &ps.ay, &ps.az}) a->resize(n);
    if (potential) ps.potential.resize(n);
    build(ps, relative);

    const auto t1 = std::chrono::steady_clock::now();
    // Several processes: every one builds the same tree and walks its groups, dealt like
    // cards by the chunk of kShareChunkBodies bodies that holds a group's first body, so
    // that each gets core and halo groups alike (as the GPU tree does); walk_forces leaves
    // the bodies of the other groups at exactly 0.
    const std::vector<tree::Group>* walked = &groups_;
    if (parts_ > 1) {
      share_groups_.clear();
      for (const tree::Group& g : groups_) {
        if (in_share(g)) share_groups_.push_back(g);
      }
      walked = &share_groups_;
    }
    const std::uint64_t interactions =
        tree::walk_forces<Real>(tree_, *walked, walk_options(), potential, walked_);
    stats_.interactions_per_body = n ? double(interactions) / double(n) : 0.0;

    scatter(ps, potential);
    stats_.walk_seconds = seconds_since(t1);
    evaluated_ = n;
    ps.set_force_flags(true, potential);
  }

  /// The tree of all the bodies as compute_forces() builds it; then only the groups that
  /// hold active bodies are walked, each shrunk to the tree-ordered range from its first
  /// to its last active body (the inactive bodies inside that range ride along in the
  /// kernel, their results dropped), and only the active bodies get results.
  /// stats().interactions_per_body: the interactions of the active bodies (pairs +
  /// accepted cells), per active body.
  void compute_forces_active(ParticleSystem& ps, bool potential,
                             const std::vector<std::uint32_t>& active) override {
    const std::size_t n = ps.size();
    for (auto* a : {&ps.ax, &ps.ay, &ps.az}) a->resize(n);
    if (potential) ps.potential.resize(n);
    for (const std::uint32_t i : active) {
      if (i >= n) {
        throw Error(fmt::format("compute_forces_active: body {} is out of range (N = {})", i, n));
      }
    }
    stats_ = {};
    if (active.empty()) return;
    const bool relative = take_old_accelerations(ps);
    build(ps, relative);

    const auto t1 = std::chrono::steady_clock::now();
    // The tree positions of the active bodies, ascending.
    position_.resize(n);
    for (std::size_t k = 0; k < n; ++k) position_[tree_.order[k]] = static_cast<std::uint32_t>(k);
    active_positions_.clear();
    for (const std::uint32_t i : active) active_positions_.push_back(position_[i]);
    std::sort(active_positions_.begin(), active_positions_.end());
    // The groups to walk, shrunk (the walk opens the cells of the whole group's box, so an
    // active body's forces are those of a full evaluation, bit for bit); dealt between processes by
    // the group's own first body, as compute_forces() deals them.
    tree::active_groups(groups_, active_positions_, std::uint32_t(simd::kStep), share_groups_,
                        nullptr, [&](const tree::Group& g) { return parts_ == 1 || in_share(g); });
    const std::uint64_t interactions =
        tree::walk_forces<Real>(tree_, share_groups_, walk_options(), potential, walked_);
    stats_.interactions_per_body = double(interactions) / double(active.size());

    // The results of the active bodies alone (exact zeros for those of other shares).
    tree::store_active(walked_, position_, active, options_.G, options_.dim, potential, ps);
    stats_.walk_seconds = seconds_since(t1);
    evaluated_ = n;
  }

  [[nodiscard]] SolverStats stats() const override { return stats_; }
  bool set_share(int part, int parts) override {
    part_ = part;
    parts_ = parts;
    return true;
  }

 private:
  /// Tree, moments and walk groups of all the bodies (stats_.build_seconds); `relative`:
  /// the relative criterion, with |a_old| / G in tree order.
  void build(const ParticleSystem& ps, bool relative) {
    const auto t0 = std::chrono::steady_clock::now();
    // The same cells either way (tree_insertion_build.cpp): only how they are found differs.
    if (options_.tree_build == TreeBuild::Insertion) {
      tree::build_tree_insertion(ps, options_.dim, kLeafSize, options_.threads, tree_, scratch_);
    } else {
      tree::build_tree(ps, options_.dim, kLeafSize, options_.threads, tree_, scratch_);
    }
    tree::compute_moments(tree_, options_.quadrupole);
    const OpeningCriterion mac = relative || options_.mac != OpeningCriterion::Relative
                                     ? options_.mac
                                     : OpeningCriterion::Geometric;
    if (mac != OpeningCriterion::Geometric) tree::set_opening(tree_, mac);
    a_old_tree_.resize(relative ? ps.size() : 0);
    for (std::size_t k = 0; k < a_old_tree_.size(); ++k) a_old_tree_[k] = a_old_[tree_.order[k]];
    tree::make_groups(tree_, kMaxGroup, groups_);
    stats_.build_seconds = seconds_since(t0);
    stats_.build_stages.clear();
    if (options_.tree_build == TreeBuild::Insertion) {
      const tree::InsertionTimes& it = scratch_.insertion_times;
      stats_.build_stages = {
          {"build", it.prepare + it.insert},
          {"sort", it.layout},
          {"summarise", stats_.build_seconds - it.prepare - it.insert - it.layout}};
    }
  }

  /// The relative criterion needs every body's acceleration of the last evaluation: those
  /// in ps when this solver evaluated the same number of bodies last (the stepper keeps
  /// them, summed over processes), or when ps says they are an evaluation of these bodies
  /// (a checkpoint's: a restarted run opens as the uninterrupted one); |a| / G into
  /// a_old_. False otherwise (the first evaluation, or bodies merged away since): then
  /// theta decides, as in GADGET-4. Also false at theta 0 (opens_by_old_accelerations).
  bool take_old_accelerations(const ParticleSystem& ps) {
    const std::size_t n = ps.size();
    if (!opens_by_old_accelerations(options_.mac, options_.theta) || ps.ax.size() != n ||
        (evaluated_ != n && !ps.accelerations_valid()))
      return false;
    a_old_.resize(n);
    const double inv_g = 1.0 / options_.G;
    for (std::size_t i = 0; i < n; ++i) {
      a_old_[i] = std::sqrt(ps.ax[i] * ps.ax[i] + ps.ay[i] * ps.ay[i] + ps.az[i] * ps.az[i]) *
                  std::abs(inv_g);
    }
    return true;
  }

  [[nodiscard]] tree::WalkOptions walk_options() const {
    tree::WalkOptions w{options_.theta, options_.quadrupole, options_.softening, options_.threads};
    w.mac = options_.mac;
    w.alpha = options_.alpha;
    w.a_old = a_old_tree_.empty() ? nullptr : a_old_tree_.data();
    return w;
  }

  /// Whether this process walks group g (several processes).
  [[nodiscard]] bool in_share(const tree::Group& g) const {
    return (g.begin / kShareChunkBodies) % std::size_t(parts_) == std::size_t(part_);
  }

  /// The walk's results back to the particle system's order, times G.
  void scatter(ParticleSystem& ps, bool potential) const {
    const double G = options_.G;
    const bool planar = options_.dim == 2;
    const tree::WalkOutput& w = walked_;
    for (std::size_t k = 0; k < ps.size(); ++k) {
      const std::size_t i = tree_.order[k];
      ps.ax[i] = G * w.ax[k];
      ps.ay[i] = G * w.ay[k];
      ps.az[i] = planar ? 0.0 : G * w.az[k];
    }
    if (!potential) return;
    for (std::size_t k = 0; k < ps.size(); ++k) ps.potential[tree_.order[k]] = G * w.phi[k];
  }

  GravityOptions options_;
  tree::Tree tree_;
  tree::BuildScratch scratch_;
  std::vector<tree::Group> groups_;
  std::vector<double> a_old_, a_old_tree_;       // relative criterion: |a| / G, ps and tree order
  std::size_t evaluated_ = 0;                    // bodies of the last evaluation
  std::vector<tree::Group> share_groups_;        // the groups walked, when not all of groups_
  std::vector<std::uint32_t> position_;          // body -> tree position (compute_forces_active)
  std::vector<std::uint32_t> active_positions_;  // the active bodies' tree positions, sorted
  static constexpr std::size_t kShareChunkBodies = 1024;
  int part_ = 0, parts_ = 1;
  tree::WalkOutput walked_;  // tree order, per unit G
  SolverStats stats_;
};

}  // namespace

void check_tree_options(const GravityOptions& options) {
  if (!std::isfinite(options.theta) || options.theta < 0) {
    throw input_error("--theta", "the opening angle must be a finite number >= 0", options.theta);
  }
  if (options.dim != 2 && options.dim != 3) {
    throw input_error("--dim", "the tree needs 2 (quadtree) or 3 (octree)", options.dim);
  }
  if (!(std::isfinite(options.alpha) && options.alpha > 0)) {
    throw input_error("--alpha",
                      "the relative opening criterion's tolerance must be a finite number > 0",
                      options.alpha);
  }
}

std::unique_ptr<GravitySolver> make_tree_solver(const GravityOptions& options) {
  check_tree_options(options);
  if (options.device != Device::Cpu) {
    throw Error("make_tree_solver: the CPU tree (use make_gravity_solver for --device gpu)");
  }
  if (options.precision == Precision::Float) return std::make_unique<TreeSolver<float>>(options);
  return std::make_unique<TreeSolver<double>>(options);
}

}  // namespace nbody
