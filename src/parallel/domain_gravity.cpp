// The collective solver of the domain decomposition (domain_gravity.hpp): keys, cut,
// migration, then the forces by the ring (direct sum) or the essential trees (tree).
#include "parallel/domain_gravity.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/environment_value.hpp"
#include "nbody/error.hpp"
#include "nbody/input_error.hpp"
#include "parallel/direct_ring.hpp"
#include "parallel/domain_tree_forces.hpp"

namespace nbody::parallel {
namespace {

class Domain final : public DomainGravity {
 public:
  Domain(const GravityOptions& o, std::shared_ptr<ForceReducer> comm, DomainOptions domain)
      : options_(o), comm_(std::move(comm)), domain_(domain) {
    if (o.algorithm == GravityAlgorithm::Direct) {
      ring_ = make_direct_ring(o.precision, o.G, o.softening, o.threads);
    } else {
      tree_ = make_domain_tree_forces(o, domain.curve);
    }
  }

  [[nodiscard]] std::string name() const override {
    return fmt::format("domain-{}-{}",
                       options_.algorithm == GravityAlgorithm::Direct ? "direct-ring" : "tree-let",
                       comm_->parts());
  }

  void compute_forces(ParticleSystem& ps, bool potential) override {
    const KeyCube cube = cut_and_migrate(ps);
    forces(ps, potential, cube);
  }

  void redistribute(ParticleSystem& ps) override { (void)cut_and_migrate(ps); }

  void bodies_removed(const std::vector<std::size_t>& indices) override {
    if (indices.empty() || indices.back() >= cost_.size()) return;  // no costs of these yet
    std::size_t kept = 0, next = 0;
    for (std::size_t i = 0; i < cost_.size(); ++i) {
      if (next < indices.size() && indices[next] == i) {
        ++next;
        continue;
      }
      cost_[kept++] = cost_[i];
    }
    cost_.resize(kept);
  }

  void compute_forces_in_place(ParticleSystem& ps, bool potential) override {
    const int dim = options_.algorithm == GravityAlgorithm::Direct ? 3 : options_.dim;
    if (cost_.size() != ps.size()) cost_.assign(ps.size(), 1.0);
    forces(ps, potential, global_cube(ps, dim, *comm_, options_.threads));
  }

  /// The forces of the active bodies, the others' kept (hierarchical time steps; no
  /// migration: the bodies move between ranks at the start of a step, redistribute()).
  void compute_forces_active(ParticleSystem& ps, bool potential,
                             const std::vector<std::uint32_t>& active) override {
    const int dim = options_.algorithm == GravityAlgorithm::Direct ? 3 : options_.dim;
    if (cost_.size() != ps.size()) cost_.assign(ps.size(), 1.0);
    const KeyCube cube = global_cube(ps, dim, *comm_, options_.threads);
    if (tree_) {
      const DomainTreeResult r = tree_->compute_forces(ps, potential, cube, *comm_, cost_, &active);
      stats_.bytes_sent = r.bytes_sent;
      solver_stats_ = r.solver;
      return;
    }
    // The ring computes every local body's forces (its blocks travel anyway): the inactive
    // bodies' accelerations and potentials are put back as they were.
    const std::size_t n = ps.size();
    std::vector<char> is_active(n, 0);
    for (const std::uint32_t i : active) {
      if (i >= n)
        throw Error(fmt::format("compute_forces_active: body {} is out of range (N = {})", i, n));
      is_active[i] = 1;
    }
    const bool valid = ps.accelerations_valid();
    const std::vector<double> ax = ps.ax, ay = ps.ay, az = ps.az, phi = ps.potential;
    forces(ps, potential, cube);
    for (std::size_t i = 0; i < n; ++i) {
      if (is_active[i] || i >= ax.size()) continue;
      ps.ax[i] = ax[i], ps.ay[i] = ay[i], ps.az[i] = az[i];
      if (potential && i < phi.size()) ps.potential[i] = phi[i];
    }
    if (valid) ps.set_accelerations_valid();
  }

  [[nodiscard]] SolverStats stats() const override { return solver_stats_; }
  [[nodiscard]] DomainStats domain_stats() const override { return stats_; }
  [[nodiscard]] const DomainCuts& cuts() const override { return cuts_; }
  [[nodiscard]] DecompositionState state() const override {
    return {cuts_.first, cuts_.level, cost_};
  }
  void resume(const DecompositionState& s) override {
    cost_ = s.cost;  // cut_and_migrate counts 1 a body when it is not one a body
    if (s.cuts.empty())
      return;  // the costs alone (another count of ranks): the first cut uses them
    const auto parts = std::size_t(comm_->parts());
    const bool ordered = std::is_sorted(s.cuts.begin(), s.cuts.end());
    if (s.cuts.size() != parts + 1 || !ordered || s.cuts.front() != 0 || s.cuts.back() != kKeyEnd ||
        s.cut_level < 0 || s.cut_level > 31)
      throw Error(
          fmt::format("domain decomposition: {} cuts (level {}) cannot resume a run of {} "
                      "ranks",
                      s.cuts.size(), s.cut_level, parts));
    cuts_ = {};
    cuts_.first = s.cuts;
    cuts_.level = s.cut_level;
  }

 private:
  /// Keys, the cut when out of balance, the migration (compute_forces' first half); the
  /// cube of every rank's bodies, which the forces' trees share.
  KeyCube cut_and_migrate(ParticleSystem& ps) {
    ForceReducer& comm = *comm_;
    const int dim = options_.algorithm == GravityAlgorithm::Direct ? 3 : options_.dim;
    const KeyCube cube = global_cube(ps, dim, comm, options_.threads);
    std::vector<std::uint64_t> keys = domain_keys(ps, dim, cube, options_.threads, domain_.curve);
    if (cost_.size() != ps.size()) cost_.assign(ps.size(), 1.0);  // the first call
    stats_ = {};
    if (cuts_.first.empty()) {
      stats_.recut = true;
    } else {
      stats_.imbalance = imbalance(keys, cost_, cuts_, comm);
      stats_.recut = stats_.imbalance > domain_.recut_imbalance;
    }
    if (stats_.recut) cuts_ = balance(keys, cost_, dim, comm, domain_.balance);
#ifndef NDEBUG
    const Census before = census(ps, comm);
#endif
    stats_.migration = migrate(ps, keys, &cost_, cuts_, comm);
#ifndef NDEBUG
    check_census(before, census(ps, comm), "domain decomposition, migration");
#endif
    stats_.bodies = ps.size();
    return cube;
  }

  /// The forces of ps's bodies as they are distributed now.
  void forces(ParticleSystem& ps, bool potential, const KeyCube& cube) {
    ForceReducer& comm = *comm_;
    if (ring_) {
      ring_->compute_forces(ps, potential, comm);
      stats_.bytes_sent = ring_->stats().bytes_sent;
      // Every body of the direct sum costs the same N interactions.
      std::fill(cost_.begin(), cost_.end(), 1.0);
      solver_stats_.interactions_per_body =
          ps.empty() ? 0.0 : double(ring_->stats().pairs) / double(ps.size());
    } else {
      const DomainTreeResult r = tree_->compute_forces(ps, potential, cube, comm, cost_);
      stats_.bytes_sent = r.bytes_sent;
      solver_stats_ = r.solver;
    }
  }

  GravityOptions options_;
  std::shared_ptr<ForceReducer> comm_;
  DomainOptions domain_;
  std::unique_ptr<DirectRing> ring_;
  std::unique_ptr<DomainTreeForces> tree_;
  DomainCuts cuts_;
  std::vector<double> cost_;  // per local body: the last evaluation's interactions
  DomainStats stats_;
  SolverStats solver_stats_;
};

}  // namespace

std::string replicated_because(const SimulationOptions& o) {
  const GravityOptions& g = o.gravity;
  // The GPU: the tree (not its input-order walk, whose groups are not the tree's) and the
  // direct sum with any kernel (cuda/domain_forces.cuh); the CPU: the tree and the fast
  // kernel's direct sum.
  const bool cpu = g.device == Device::Cpu;
  if (g.G == 0 || g.algorithm == GravityAlgorithm::None) return "no gravity to share out";
  if (o.integrator.scheme == IntegratorScheme::Ias15) return "IAS15 is not decomposed";
  if (o.test_particles) return "test particles are not decomposed yet";
  if (o.integrator.timestep == TimestepMode::Hierarchical)
    return "the hierarchical scheme is not decomposed yet";
  // Collisions: CPU ranks (domain_collisions.hpp).
  if (o.collisions.model != CollisionModel::None && !cpu)
    return "collisions on GPU ranks are not decomposed yet";
  if (!cpu && g.algorithm == GravityAlgorithm::Tree && g.tree_input_order_walk)
    return "the input-order walk is not decomposed";
  if (cpu && g.algorithm == GravityAlgorithm::Direct && g.kernel != ForceKernel::Fast)
    return fmt::format("the {} kernel is not decomposed; --kernel fast is", to_string(g.kernel));
  // Hierarchical steps: CPU ranks (BlockSteps::share_bins) and the GPU tree (the substeps'
  // histograms all-gathered, cuda/device_block_steps.cuh). The GPU direct sum's decomposition
  // would compute every body at every substep; its shares walk the active bodies alone.
  if (!cpu && o.integrator.timestep == TimestepMode::Adaptive &&
      g.algorithm != GravityAlgorithm::Tree)
    return "adaptive steps with the GPU direct sum share out the active bodies instead";
  // Its cells' densities count every body (integrators/cell_density.hpp).
  if (o.integrator.timestep == TimestepMode::Adaptive &&
      o.integrator.timestep_criterion == TimestepCriterion::Dynamical)
    return "the dynamical time-step criterion is not decomposed yet";
  // Its jerk sums every pair on the host (block_steps.cpp).
  if (o.integrator.timestep == TimestepMode::Adaptive &&
      o.integrator.timestep_criterion == TimestepCriterion::Jerk)
    return "the jerk time-step criterion is not decomposed yet";
  return {};
}

bool runs_decomposed(const SimulationOptions& o) {
  return replicated_because(o).empty();
}

std::unique_ptr<DomainGravity> make_domain_gravity(const GravityOptions& options,
                                                   std::shared_ptr<ForceReducer> comm,
                                                   DomainOptions domain) {
  validate(options);
  if (!comm) throw Error("make_domain_gravity: no communicator");
  if (options.device != Device::Cpu)
    throw input_error("--device", "the domain decomposition runs on CPU ranks for now", "gpu");
  if (options.algorithm == GravityAlgorithm::None)
    throw input_error("--gravity", "the domain decomposition needs a force algorithm", "none");
  if (options.algorithm == GravityAlgorithm::Direct && options.kernel != ForceKernel::Fast)
    throw input_error("--kernel", "the domain decomposition's direct sum is the fast kernel's",
                      to_string(options.kernel));
  if (domain.balance.max_bodies_per_rank == 0)
    domain.balance.max_bodies_per_rank = options.max_bodies_per_rank;
  if (!(domain.recut_imbalance >= 1.0))
    throw Error(fmt::format("domain decomposition: a re-cut threshold of {} (must be >= 1)",
                            domain.recut_imbalance));
  return std::make_unique<Domain>(options, std::move(comm), domain);
}

double settling_imbalance_from(const char* text) {
  if (text == nullptr) return 0;
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  if (end == text || *end != '\0' || !std::isfinite(v) || !(v >= 1.0))
    throw input_error("NBODY_DOMAIN_SETTLING_IMBALANCE", "must be a number of at least 1",
                      std::string(text));
  return v;
}

std::size_t migration_round_from(const char* text) {
  return whole_from_environment("NBODY_DOMAIN_MIGRATION_ROUND", text, 1, ~0ULL,
                                "must be a whole number of bodies, at least 1");
}

std::size_t pieces_per_rank_from(const char* text) {
  return whole_from_environment("NBODY_DOMAIN_PIECES", text, 1, 16384,
                                "must be a whole number of pieces from 1 to 16384");
}

int piece_split_from(const char* text) {
  return int(whole_from_environment("NBODY_DOMAIN_PIECE_SPLIT", text, 0, 2, "must be 0, 1 or 2"));
}

bool merge_received_from(const char* text) {
  return whole_from_environment("NBODY_DOMAIN_MERGE", text, 0, 1, "must be 0 or 1") == 1;
}

}  // namespace nbody::parallel
