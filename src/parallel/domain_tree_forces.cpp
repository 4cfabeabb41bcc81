// The tree forces of a rank that owns its bodies (domain_tree_forces.hpp):
//   1. its tree in the cube of all bodies, so its cells are the global tree's cells;
//   2. every rank's receiver box (its bodies' bounding box and smallest |a_old|), gathered;
//   3. for every other rank, the part of its tree that rank's groups could open
//      (tree/essential_tree.hpp), sent in one exchange;
//   4. its groups walked against its own tree and against each tree received, summed.
// Walking the local tree while the essential trees travel would hide the exchange; on CPU
// ranks MPI is FUNNELED and the walk's OpenMP team holds the calling thread, so the exchange
// comes first (docs/distributed.md gives its measured share).
#include "parallel/domain_tree_forces.hpp"

#include "parallel/shared_top_tree.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <type_traits>

#include <fmt/format.h>

#include "core/omp_team.hpp"
#include "gravity/direct_simd_kernels.hpp"
#include "nbody/error.hpp"
#include "parallel/domain_gravity.hpp"
#include "tree/essential_tree.hpp"
#include "tree/tree.hpp"

namespace nbody::parallel {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

template <class Real>
class TreeForces final : public DomainTreeForces {
 public:
  TreeForces(const GravityOptions& o, DomainCurve curve)
      : options_(o),
        curve_(curve),
        split_(piece_split_from(std::getenv("NBODY_DOMAIN_PIECE_SPLIT"))) {}

  DomainTreeResult compute_forces(ParticleSystem& ps, bool potential, const KeyCube& cube,
                                  ForceReducer& comm, std::vector<double>& cost,
                                  const std::vector<std::uint32_t>* active) override {
    const auto t0 = std::chrono::steady_clock::now();
    const std::size_t n = ps.size();
    const bool relative = take_old_accelerations(ps);
    tree::build_tree(ps, options_.dim, tree::kLeafSize, options_.threads,
                     tree::RootCube{cube.cx, cube.cy, cube.cz, cube.half}, tree_, scratch_);
    tree::compute_moments(tree_, options_.quadrupole);
    // The cells other ranks' bodies share get the global cell's moments (shared_top_tree.hpp).
    (void)share_top_cells(tree_, comm, curve_);
    // The relative criterion needs every body's last |a|; without (the first evaluation)
    // theta decides, as in one process.
    const OpeningCriterion mac = relative || options_.mac != OpeningCriterion::Relative
                                     ? options_.mac
                                     : OpeningCriterion::Geometric;
    if (mac != OpeningCriterion::Geometric) tree::set_opening(tree_, mac);
    a_old_tree_.resize(relative ? n : 0);
    for (std::size_t k = 0; k < a_old_tree_.size(); ++k) a_old_tree_[k] = a_old_[tree_.order[k]];
    tree::make_groups(tree_, tree::kMaxGroup, groups_);
    // The groups walked: every one, or those of the active bodies shrunk to them (the
    // receiver boxes then those of their whole groups: the cells their walks open).
    const std::vector<tree::Group>* walked = &groups_;
    if (active) {
      select_active(*active);
      walked = &active_groups_;
    }
    tree::WalkOptions w{options_.theta, options_.quadrupole, options_.softening, options_.threads};
    w.mac = mac;
    w.alpha = options_.alpha;
    w.a_old = a_old_tree_.empty() ? nullptr : a_old_tree_.data();
    w.count_interactions = true;

    // Every rank's box, then the essential trees in one exchange.
    // One box per walk group: one box around a Plummer domain spans its outliers, nearly
    // the whole cube, and would have every rank sent nearly everything (tree-accuracy.md).
    const std::vector<tree::Group>& boxed = active ? whole_groups_ : groups_;
    const auto boxes = comm.all_gather(tree::receiver_boxes_bytes(
        tree::receiver_boxes(tree_, boxed, w.a_old, boxed.size(), split_)));
    std::vector<ForceReducer::Bytes> send(boxes.size());
    DomainTreeResult result;
    // One receiver's tree a thread (independent: each reads the local tree alone).
    RegionErrors errors;
    const auto receivers = static_cast<std::ptrdiff_t>(boxes.size());
#pragma omp parallel for schedule(dynamic) \
    num_threads(team_size(options_.threads)) if (receivers > 2)
    for (std::ptrdiff_t q = 0; q < receivers; ++q) {
      const auto u = static_cast<std::size_t>(q);
      if (q != comm.part())
        errors.run(
            [&] { send[u] = tree::essential_tree(tree_, tree::read_receiver_boxes(boxes[u]), w); });
    }
    errors.rethrow();
    for (const auto& bytes : send) result.bytes_sent += bytes.size();
    const auto received = comm.exchange(send);
    result.solver.build_seconds = seconds_since(t0);

    const auto t1 = std::chrono::steady_clock::now();
    std::uint64_t interactions = tree::walk_forces<Real>(tree_, *walked, w, potential, total_);
    for (std::size_t q = 0; q < received.size(); ++q) {
      if (int(q) == comm.part() || received[q].empty()) continue;
      const tree::Tree sources = tree::read_essential_tree(received[q]);
      interactions += tree::walk_forces<Real>(tree_, *walked, sources, w, potential, remote_);
      add(remote_, potential);
    }
    if (active) {
      scatter_active(ps, potential, cost, *active);
    } else {
      scatter(ps, potential, cost);
    }
    result.solver.walk_seconds = seconds_since(t1);
    const std::size_t counted = active ? active->size() : n;
    result.solver.interactions_per_body = counted ? double(interactions) / double(counted) : 0.0;
    return result;
  }

 private:
  /// |a_old| / G of every body when the relative criterion can use it (the solver of one
  /// process's rule, tree_solver.cpp: the accelerations of the last evaluation, valid).
  bool take_old_accelerations(const ParticleSystem& ps) {
    const std::size_t n = ps.size();
    if (!opens_by_old_accelerations(options_.mac, options_.theta) || ps.ax.size() != n ||
        !ps.accelerations_valid())
      return false;
    a_old_.resize(n);
    const double inv_g = std::abs(1.0 / options_.G);
    for (std::size_t i = 0; i < n; ++i)
      a_old_[i] =
          std::sqrt(ps.ax[i] * ps.ax[i] + ps.ay[i] * ps.ay[i] + ps.az[i] * ps.az[i]) * inv_g;
    return true;
  }

  /// The walk's groups for the active bodies (active_groups_) and their whole groups
  /// (whole_groups_), from the tree just built.
  void select_active(const std::vector<std::uint32_t>& active) {
    const std::size_t n = tree_.order.size();
    position_.resize(n);
    for (std::size_t k = 0; k < n; ++k) position_[tree_.order[k]] = static_cast<std::uint32_t>(k);
    positions_.clear();
    for (const std::uint32_t i : active) {
      if (i >= n)
        throw Error(fmt::format("compute_forces_active: body {} is out of range (N = {})", i, n));
      positions_.push_back(position_[i]);
    }
    std::sort(positions_.begin(), positions_.end());
    tree::active_groups(groups_, positions_, std::uint32_t(simd::kStep), active_groups_,
                        &whole_groups_);
  }

  /// The active bodies' sums back to body order, times G, and their costs; the others keep
  /// theirs (the walk gave them nothing or a ride-along result).
  void scatter_active(ParticleSystem& ps, bool potential, std::vector<double>& cost,
                      const std::vector<std::uint32_t>& active) const {
    const std::size_t n = ps.size();
    for (auto* a : {&ps.ax, &ps.ay, &ps.az}) a->resize(n);
    if (potential) ps.potential.resize(n);
    tree::store_active(total_, position_, active, options_.G, options_.dim, potential, ps);
    cost.resize(n, 1.0);
    for (const std::uint32_t i : active)
      cost[i] = std::max(1.0, double(total_.interactions[position_[i]]));
  }

  void add(const tree::WalkOutput& r, bool potential) {
    for (std::size_t k = 0; k < total_.ax.size(); ++k) {
      total_.ax[k] += r.ax[k], total_.ay[k] += r.ay[k], total_.az[k] += r.az[k];
      total_.interactions[k] += r.interactions[k];
      if (potential) total_.phi[k] += r.phi[k];
    }
  }

  /// The sums back to body order, times G; each body's interactions as its cost.
  void scatter(ParticleSystem& ps, bool potential, std::vector<double>& cost) const {
    const std::size_t n = ps.size();
    const double G = options_.G;
    const bool planar = options_.dim == 2;
    for (auto* a : {&ps.ax, &ps.ay, &ps.az}) a->resize(n);
    cost.resize(n);
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t i = tree_.order[k];
      ps.ax[i] = G * total_.ax[k];
      ps.ay[i] = G * total_.ay[k];
      ps.az[i] = planar ? 0.0 : G * total_.az[k];
      cost[i] = std::max(1.0, double(total_.interactions[k]));
    }
    ps.set_accelerations_valid();
    if (potential) {
      ps.potential.resize(n);
      for (std::size_t k = 0; k < n; ++k) ps.potential[tree_.order[k]] = G * total_.phi[k];
      ps.set_potentials_valid();
    } else {
      ps.invalidate_potentials();
    }
  }

  GravityOptions options_;
  DomainCurve curve_;
  int split_;  // NBODY_DOMAIN_PIECE_SPLIT: receiver_boxes' split
  tree::Tree tree_;
  tree::BuildScratch scratch_;
  std::vector<tree::Group> groups_, active_groups_, whole_groups_;
  std::vector<std::uint32_t> position_, positions_;  // tree position of body i; the active's
  std::vector<double> a_old_, a_old_tree_;
  tree::WalkOutput total_, remote_;  // tree order, per unit G
};

}  // namespace

std::unique_ptr<DomainTreeForces> make_domain_tree_forces(const GravityOptions& options,
                                                          DomainCurve curve) {
  if (resolve_precision(options.precision, GravityAlgorithm::Tree) == Precision::Float)
    return std::make_unique<TreeForces<float>>(options, curve);
  return std::make_unique<TreeForces<double>>(options, curve);
}

}  // namespace nbody::parallel
