// The CPU Barnes-Hut solver: build (tree_build.cpp), moments (tree_moments.cpp), group
// walk with the SIMD kernel (tree_walk.cpp), accelerations scattered back to the
// particle system's order and multiplied by G.
//
// Parameters, measured on Plummer N = 100000, theta = 0.5, float, 1 thread, Zen 3 (a
// loaded machine, so +-15%): max group 32 / 64 / 96 gave walks of 510 / 370 / 360 ms with
// 2821 / 3214 / 3533 interactions per body (smaller groups repeat the walk more often,
// larger ones lengthen every body's list); leaf size 4 / 8 / 12 / 16 gave 389 / 370 /
// 382 / 398 ms. 64 is kept over 96 for the shorter lists (the double kernel is 2.7x
// slower per pair, so the list length matters more there).
#include "tree/tree_solver.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <type_traits>

#include "nbody/error.hpp"
#include "tree/tree.hpp"

namespace nbody {
namespace {

/// Bodies per leaf at most (except at maximum depth).
constexpr std::size_t kLeafSize = 8;
/// Bodies per walk group at most. Larger groups share one walk among more bodies but open
/// more cells. Plummer N = 1e5, theta 0.5, 2 threads, float: 64 -> 135-145 ms (3183
/// interactions/body, walk alone 53 ms), 96 -> 130 ms, 128 -> 120-124 ms (3861/body, walk
/// alone 34 ms); double is the same at 64 and 128 (~252 ms, kernel-bound).
constexpr std::size_t kMaxGroup = 128;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

template <class Real>
class TreeSolver final : public GravitySolver {
 public:
  explicit TreeSolver(const GravityOptions& o) : options_(o) {}

  [[nodiscard]] std::string name() const override {
    return fmt::format("tree-{}-{}{}", options_.dim == 2 ? "quadtree" : "octree",
                       std::is_same_v<Real, float> ? "float" : "double",
                       options_.quadrupole ? "-quadrupole" : "");
  }

  void compute_forces(ParticleSystem& ps, bool potential) override {
    const std::size_t n = ps.size();
    for (auto* a : {&ps.ax, &ps.ay, &ps.az}) a->resize(n);
    if (potential) ps.potential.resize(n);
    const auto t0 = std::chrono::steady_clock::now();
    tree::build_tree(ps, options_.dim, kLeafSize, options_.threads, tree_, scratch_);
    tree::compute_moments(tree_, options_.quadrupole);
    tree::make_groups(tree_, kMaxGroup, groups_);
    stats_.build_seconds = seconds_since(t0);

    const auto t1 = std::chrono::steady_clock::now();
    const tree::WalkOptions walk{options_.theta, options_.quadrupole, options_.softening,
                                 options_.threads};
    // Several processes: every one builds the same tree and walks its groups, dealt like
    // cards by the chunk of kShareChunkBodies bodies that holds a group's first body, so
    // that each gets core and halo groups alike (as the GPU tree does); walk_forces leaves
    // the bodies of the other groups at exactly 0.
    const std::vector<tree::Group>* walked = &groups_;
    if (parts_ > 1) {
      share_groups_.clear();
      for (std::size_t g = 0; g < groups_.size(); ++g) {
        if ((groups_[g].begin / kShareChunkBodies) % std::size_t(parts_) == std::size_t(part_)) {
          share_groups_.push_back(groups_[g]);
        }
      }
      walked = &share_groups_;
    }
    const std::uint64_t interactions =
        tree::walk_forces<Real>(tree_, *walked, walk, potential, walked_);
    stats_.interactions_per_body = n ? double(interactions) / double(n) : 0.0;

    scatter(ps, potential);
    stats_.walk_seconds = seconds_since(t1);
    ps.set_accelerations_valid();
    if (potential) {
      ps.set_potentials_valid();
    } else {
      ps.invalidate_potentials();
    }
  }

  [[nodiscard]] SolverStats stats() const override { return stats_; }
  bool set_share(int part, int parts) override {
    part_ = part;
    parts_ = parts;
    return true;
  }

 private:
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
  std::vector<tree::Group> share_groups_;  // this process's groups (several processes)
  static constexpr std::size_t kShareChunkBodies = 1024;
  int part_ = 0, parts_ = 1;
  tree::WalkOutput walked_;  // tree order, per unit G
  SolverStats stats_;
};

}  // namespace

void check_tree_options(const GravityOptions& options) {
  if (!std::isfinite(options.theta) || options.theta < 0) {
    throw Error(
        fmt::format("--theta {}: the opening angle must be a finite number >= 0", options.theta));
  }
  if (options.dim != 2 && options.dim != 3) {
    throw Error(fmt::format("--dim {}: the tree needs 2 (quadtree) or 3 (octree)", options.dim));
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
