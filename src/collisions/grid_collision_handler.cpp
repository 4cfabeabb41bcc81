// The CPU collision handler: contact search (the grid or the tree, CollisionOptions::search;
// OpenMP) + sequential resolution passes on a gathered copy of the bodies in search order (one
// 64-byte record per body, and contacting bodies close together in memory), then written back.
//
// Cost per stage: one grid build + search, one pass per iteration over the candidate
// pairs (stopping early when a pass changes nothing), and a new search only when bodies
// moved more than the skin (deeply overlapping starts; rare in a running simulation).
#include <algorithm>
#include <chrono>
#include <memory>

#include <fmt/format.h>

#include "collisions/contact_search.hpp"
#include "collisions/grid_collision_handler.hpp"
#include "collisions/parallel.hpp"
#include "collisions/resolution_passes.hpp"
#include "nbody/error.hpp"
#include "nbody/physics/timestep.hpp"

namespace nbody::collisions {
namespace {

constexpr double kSkin = kCandidateSkin;  // contact_search.hpp

class GridCollisionHandler final : public CollisionHandler {
 public:
  explicit GridCollisionHandler(const CollisionOptions& options)
      : options_(options),
        potential_{options.G, options.softening * options.softening},
        grid_(options.search) {}

  [[nodiscard]] std::string name() const override {
    return fmt::format("{}-{}-cpu", to_string(options_.model), to_string(options_.search));
  }

  CollisionStats resolve(ParticleSystem& ps, const ContactGate& gate) override {
    using Clock = std::chrono::steady_clock;
    if (ps.dim != options_.dim) {
      throw Error(
          fmt::format("collisions: the handler is set up for dim {} but the bodies have dim {}",
                      options_.dim, ps.dim));
    }
    CollisionStats stats;
    const auto start = Clock::now();
    const bool merge = options_.model == CollisionModel::Merge;
    grid_.build(ps, options_.dim, kSkin, options_.threads);
    slot_index_ = grid_.order();
    gather_bodies(ps, slot_index_, options_.threads, bodies_);
    ids_.clear();
    const bool have_ids = ps.id.size() == ps.size();  // else the bodies' order serves
    for (std::uint32_t i : slot_index_) ids_.push_back(have_ids ? ps.id[i] : i);
    removed_.clear();
    // The gate holds bounces back (time symmetry); merges go at once (physics/timestep.hpp).
    gate_ = merge ? ContactGate{} : gate;
    find_candidates();
    stats.detect_seconds = std::chrono::duration<double>(Clock::now() - start).count();

    stats.candidates = pairs_.size();
    stats.contacts = count_overlapping(bodies_, pairs_);
    bool changed = false;
    for (int pass = 0; pass < options_.iterations && !pairs_.empty(); ++pass) {
      bool fresh = pass == 0;  // candidates no pass has looked at yet
      if (pass > 0 && moved_beyond_skin()) {
        redetect(stats);
        fresh = true;
      }
      const PassResult r = merge ? merge_pass(bodies_, ids_, pairs_, options_.dim, potential_,
                                              alias_, stats.merged, slot_index_, ps.active_count())
                                 : bounce_pass(bodies_, pairs_, options_.restitution, potential_,
                                               moved_, static_cast<std::uint32_t>(pass), fresh);
      stats.energy_lost += r.energy_lost;
      ++stats.passes;
      if (!r.changed) break;  // nothing moved, so a further pass would find the same
      changed = true;
    }
    if (changed && moved_beyond_skin()) redetect(stats);  // so that max_overlap is exact
    stats.max_overlap = max_overlap_fraction(bodies_, pairs_, &alias_);
    stats.merges = stats.merged.size();
    if (changed) write_back(ps);
    stats.resolve_seconds =
        std::chrono::duration<double>(Clock::now() - start).count() - stats.detect_seconds;
    return stats;
  }

 private:
  /// Candidate pairs of the bodies as they are now (in grid order), and the positions and
  /// radii the skin is measured from.
  void find_candidates() {
    grid_.find_pairs(bodies_.data(), pairs_);
    if (gate_.bins) apply_gate();
    canonical_order();
    const std::size_t n = bodies_.size();
    reference_.resize(n);
    alias_.resize(n);
    moved_.assign(n, 0);
    for (std::size_t s = 0; s < n; ++s) {
      reference_[s] = {bodies_[s].x, bodies_[s].y, bodies_[s].z, bodies_[s].radius};
      alias_[s] = static_cast<std::uint32_t>(s);
    }
  }

  /// Each pair from its body of smaller id to the other, and the pairs of each cluster of
  /// more than one pair (bodies joined by candidate pairs) in the order of their ids, in the
  /// slots the cluster's pairs held. The passes (Gauss-Seidel) then give each cluster the same
  /// result whatever the search's order, so a decomposed run, which resolves every cluster on
  /// its own (parallel/domain_collisions.hpp), gives one process's bodies. Clusters do not
  /// touch, so their pairs may interleave as the search left them; a lone pair stays put.
  void canonical_order() {
    const std::size_t n = bodies_.size();
    for (CandidatePair& pr : pairs_)
      if (ids_[pr.b] < ids_[pr.a]) std::swap(pr.a, pr.b);
    cluster_.resize(n);
    for (std::size_t s = 0; s < n; ++s) cluster_[s] = static_cast<std::uint32_t>(s);
    const auto root = [&](std::uint32_t s) { return surviving(cluster_, s); };
    for (const CandidatePair& pr : pairs_) {
      const std::uint32_t a = root(pr.a), b = root(pr.b);
      if (a != b) cluster_[std::max(a, b)] = std::min(a, b);
    }
    pairs_in_.assign(n, 0);
    for (const CandidatePair& pr : pairs_) ++pairs_in_[root(pr.a)];
    slots_.clear();
    for (std::size_t k = 0; k < pairs_.size(); ++k)
      if (pairs_in_[root(pairs_[k].a)] > 1) slots_.push_back(k);
    moving_.resize(slots_.size());
    for (std::size_t j = 0; j < slots_.size(); ++j) moving_[j] = pairs_[slots_[j]];
    std::sort(moving_.begin(), moving_.end(), [&](const CandidatePair& l, const CandidatePair& r) {
      return ids_[l.a] != ids_[r.a] ? ids_[l.a] < ids_[r.a] : ids_[l.b] < ids_[r.b];
    });
    for (std::size_t j = 0; j < slots_.size(); ++j) pairs_[slots_[j]] = moving_[j];
  }

  /// Hierarchical steps (ContactGate): marks the bodies that overlap another and keeps
  /// the pairs whose two bodies are both in the ready bin.
  void apply_gate() {
    std::size_t kept = 0;
    for (const CandidatePair& pr : pairs_) {
      std::uint8_t& a = gate_.bins[slot_index_[pr.a]];
      std::uint8_t& b = gate_.bins[slot_index_[pr.b]];
      const CollisionBody<double>& ba = bodies_[pr.a];
      const CollisionBody<double>& bb = bodies_[pr.b];
      if (within_reach(ba, bb, 1.0) && resolvable_overlap(contact_between(ba, bb), ba, bb)) {
        a |= kContactFlag;
        b |= kContactFlag;
      }
      if (bin_of(a) == gate_.ready_bin && bin_of(b) == gate_.ready_bin) pairs_[kept++] = pr;
    }
    pairs_.resize(kept);
  }

  /// True when some body moved (or grew) by more than kSkin times its radius since the
  /// candidates were found, so that a pair outside them may now touch.
  [[nodiscard]] bool moved_beyond_skin() const {
    for (std::size_t s = 0; s < bodies_.size(); ++s) {
      if (alias_[s] != s) continue;  // merged into another body
      const CollisionBody<double>& b = bodies_[s];
      const Anchor& r = reference_[s];
      const double room = kSkin * r.radius - (b.radius - r.radius);
      const double dx = b.x - r.x, dy = b.y - r.y, dz = b.z - r.z;
      if (room < 0 || dx * dx + dy * dy + dz * dz > room * room) return true;
    }
    return false;
  }

  /// Drops merged-away bodies, sorts the rest into a new grid and finds the candidates.
  void redetect(CollisionStats& stats) {
    const auto start = std::chrono::steady_clock::now();
    std::size_t kept = 0;
    for (std::size_t s = 0; s < bodies_.size(); ++s) {
      if (alias_[s] != s) {
        removed_.push_back(slot_index_[s]);
        continue;
      }
      bodies_[kept] = bodies_[s];
      slot_index_[kept] = slot_index_[s];
      ids_[kept] = ids_[s];
      ++kept;
    }
    bodies_.resize(kept);
    slot_index_.resize(kept);
    ids_.resize(kept);

    grid_.build(bodies_, options_.dim, kSkin, options_.threads);
    const std::vector<std::uint32_t>& order = grid_.order();
    scratch_bodies_.resize(kept);
    scratch_index_.resize(kept);
    scratch_ids_.resize(ids_.size());
    for (std::size_t p = 0; p < kept; ++p) {
      scratch_bodies_[p] = bodies_[order[p]];
      scratch_index_[p] = slot_index_[order[p]];
      scratch_ids_[p] = ids_[order[p]];
    }
    bodies_.swap(scratch_bodies_);
    slot_index_.swap(scratch_index_);
    ids_.swap(scratch_ids_);
    find_candidates();
    ++stats.searches;
    stats.detect_seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

  /// Positions, velocities, masses and radii back into ps; merged-away bodies removed
  /// (the survivors keep their order and ids).
  void write_back(ParticleSystem& ps) {
    const std::size_t n = bodies_.size();
    for (std::size_t s = 0; s < n; ++s)
      if (alias_[s] != s) removed_.push_back(slot_index_[s]);
    const auto sn = static_cast<std::ptrdiff_t>(n);
#pragma omp parallel for num_threads(team_size(options_.threads)) \
    schedule(static) if (n >= kParallelLoopMin)
    for (std::ptrdiff_t k = 0; k < sn; ++k) {  // each slot writes its own body: no races
      const auto s = static_cast<std::size_t>(k);
      if (alias_[s] != s) continue;
      const std::size_t i = slot_index_[s];
      const CollisionBody<double>& b = bodies_[s];
      ps.x[i] = b.x;
      ps.y[i] = b.y;
      ps.z[i] = b.z;
      ps.vx[i] = b.vx;
      ps.vy[i] = b.vy;
      ps.vz[i] = b.vz;
      ps.mass[i] = b.mass;
      ps.radius[i] = b.radius;
    }
    ps.invalidate_accelerations();
    if (!removed_.empty()) ps.remove({removed_.begin(), removed_.end()});
  }

  CollisionOptions options_;
  ContactGate gate_;  // this stage's
  PairPotential potential_;
  ContactSearch grid_;  // the grid or the tree
  // The bodies being resolved, in grid order ("slots"), and for each its index in ps.
  std::vector<CollisionBody<double>> bodies_;
  std::vector<std::uint32_t> slot_index_;
  std::vector<std::uint64_t> ids_;  // per slot
  // canonical_order's scratch: union-find over slots, pairs per cluster, the slots of the
  // pairs of clusters of several pairs and those pairs sorted.
  std::vector<std::uint32_t> cluster_, pairs_in_;
  std::vector<std::size_t> slots_;
  std::vector<CandidatePair> moving_;
  std::vector<std::uint32_t> alias_;  // merge: slot -> slot it merged into
  std::vector<std::uint32_t> moved_;  // bounce: 1 + last pass that moved the slot
  std::vector<CandidatePair> pairs_;
  struct Anchor {
    double x, y, z, radius;
  };
  std::vector<Anchor> reference_;       // bodies when the candidates were found
  std::vector<std::uint32_t> removed_;  // ps indices of merged-away bodies
  std::vector<CollisionBody<double>> scratch_bodies_;
  std::vector<std::uint32_t> scratch_index_;
  std::vector<std::uint64_t> scratch_ids_;
};

}  // namespace

std::unique_ptr<CollisionHandler> make_grid_collision_handler(const CollisionOptions& options) {
  return std::make_unique<GridCollisionHandler>(options);
}

}  // namespace nbody::collisions
