// The collision stage on owned bodies: ghosts, clusters, each cluster resolved by one rank
// (domain_collisions.hpp says how and why).
#include "parallel/domain_collisions.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "collisions/contact_search.hpp"
#include "collisions/resolution_passes.hpp"
#include "integrators/block_steps.hpp"
#include "nbody/error.hpp"
#include "nbody/physics/opening_criterion.hpp"
#include "nbody/physics/timestep.hpp"
#include "parallel/domain_merges.hpp"
#include "parallel/occupied_cells.hpp"

namespace nbody::parallel {
namespace {

using Bytes = ForceReducer::Bytes;

/// A rank's box of bodies and its largest radius, as all-gathered.
struct RankBox {
  double lo[3], hi[3];
  double radius;
  double has;  // 1 with bodies
};

/// A body as another rank sees it (a ghost), or its new state sent back to its owner
/// (alive 0: merged into another body). bin: hierarchical steps' bin byte (ContactGate); in a
/// new state, the contact flag the stage set.
struct BodyRecord {
  double x, y, z, vx, vy, vz, mass, radius;
  double ax, ay, az;
  std::uint64_t id;
  std::uint64_t alive;
  std::uint64_t bin;
};

template <class T>
void append(Bytes& out, const T& v) {
  const std::size_t at = out.size();
  out.resize(at + sizeof v);
  std::memcpy(out.data() + at, &v, sizeof v);
}

template <class T>
std::vector<T> records_of(const Bytes& b, const char* what) {
  if (b.size() % sizeof(T) != 0)
    throw Error(fmt::format("collisions on owned bodies: a rank sent malformed {} ({} bytes)", what,
                            b.size()));
  std::vector<T> out(b.size() / sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), b.data(), b.size());
  return out;
}

/// Distance from a point to a box (0 inside): the opening test's (physics/opening_criterion.hpp).
double distance_to(const RankBox& b, double x, double y, double z) {
  return std::sqrt(distance2_point_box(
      x, y, z, 0.5 * (b.lo[0] + b.hi[0]), 0.5 * (b.lo[1] + b.hi[1]), 0.5 * (b.lo[2] + b.hi[2]),
      0.5 * (b.hi[0] - b.lo[0]), 0.5 * (b.hi[1] - b.lo[1]), 0.5 * (b.hi[2] - b.lo[2])));
}

BodyRecord record_of(const ParticleSystem& ps, std::size_t i, std::uint8_t bin = 0) {
  return {ps.x[i],      ps.y[i],  ps.z[i],  ps.vx[i], ps.vy[i], ps.vz[i], ps.mass[i],
          ps.radius[i], ps.ax[i], ps.ay[i], ps.az[i], ps.id[i], 1u,       bin};
}

void add_body(ParticleSystem& ps, const BodyRecord& r) {
  ps.add(Body{{r.x, r.y, r.z}, {r.vx, r.vy, r.vz}, r.mass, r.radius, r.id});
  ps.ax.back() = r.ax, ps.ay.back() = r.ay, ps.az.back() = r.az;
}

class DomainCollisions final : public CollisionHandler {
 public:
  DomainCollisions(std::unique_ptr<CollisionHandler> local, const CollisionOptions& options,
                   std::shared_ptr<ForceReducer> comm, RemovedBodies removed)
      : local_(std::move(local)),
        options_(options),
        comm_(std::move(comm)),
        removed_(std::move(removed)) {
    if (!local_ || !comm_) throw Error("collisions on owned bodies: no handler or communicator");
  }

  [[nodiscard]] std::string name() const override {
    return local_->name() + "-domain-" + std::to_string(comm_->parts());
  }

  CollisionStats resolve(ParticleSystem& ps, const ContactGate& gate) override {
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    const std::vector<RankBox> boxes = gather_boxes(ps);
    double radius = 0;
    for (const RankBox& b : boxes) radius = std::max(radius, b.radius);
    CollisionStats stats;
    if (radius > 0) {  // every rank the same: no contacts without radii
      // The farthest apart two bodies of a candidate pair can be.
      const double reach = 2 * radius * (1 + collisions::kCandidateSkin);
      double depth = 2 * reach;
      const OccupiedCells cells(ps, *comm_);
      while (!find_clusters(ps, gate.bins, boxes, cells, reach, depth)) depth *= 2;
      stats.detect_seconds = std::chrono::duration<double>(Clock::now() - start).count();
      stats = resolve_mine(ps, gate, stats.detect_seconds);
    }
    sum_over_ranks(stats);
    stats.merged.clear();  // events of other ranks' bodies; the accelerations are set here
    stats.resolve_seconds =
        std::chrono::duration<double>(Clock::now() - start).count() - stats.detect_seconds;
    return stats;
  }

 private:
  std::vector<RankBox> gather_boxes(const ParticleSystem& ps) const {
    RankBox mine{{0, 0, 0}, {0, 0, 0}, 0, ps.empty() ? 0.0 : 1.0};
    for (int k = 0; k < 3; ++k) mine.lo[k] = mine.hi[k] = 0;
    for (std::size_t i = 0; i < ps.size(); ++i) {
      const double p[3] = {ps.x[i], ps.y[i], ps.z[i]};
      for (int k = 0; k < 3; ++k) {
        mine.lo[k] = i == 0 ? p[k] : std::min(mine.lo[k], p[k]);
        mine.hi[k] = i == 0 ? p[k] : std::max(mine.hi[k], p[k]);
      }
      mine.radius = std::max(mine.radius, ps.radius.empty() ? 0.0 : ps.radius[i]);
    }
    Bytes out;
    append(out, mine);
    std::vector<RankBox> boxes;
    for (const Bytes& b : comm_->all_gather(out)) {
      const std::vector<RankBox> one = records_of<RankBox>(b, "boxes");
      if (one.size() != 1) throw Error("collisions on owned bodies: a rank sent no box");
      boxes.push_back(one[0]);
    }
    return boxes;
  }

  /// Collective. Steps 1-2: the ghosts within `depth` of this rank's box, the candidate
  /// pairs and their clusters; true when every rank's clusters are complete.
  bool find_clusters(const ParticleSystem& ps, const std::uint8_t* bins,
                     const std::vector<RankBox>& boxes, const OccupiedCells& cells, double reach,
                     double depth) {
    const int parts = comm_->parts(), me = comm_->part();
    const std::size_t n = ps.size();
    // Each other rank's ghosts: the bodies within depth of its box and (while the depth is a
    // few of the grid's cells) of a cell holding one of its bodies.
    const bool scan = cells.scannable(depth);
    std::vector<Bytes> send(static_cast<std::size_t>(parts));
    sent_.assign(std::size_t(parts), {});
    for (std::size_t i = 0; i < n; ++i) {
      std::uint64_t near = ~std::uint64_t{0};
      bool asked = false;
      for (int q = 0; q < parts; ++q) {
        const RankBox& b = boxes[std::size_t(q)];
        if (q == me || b.has == 0 || distance_to(b, ps.x[i], ps.y[i], ps.z[i]) > depth) continue;
        if (scan && !std::exchange(asked, true))
          near = cells.near(ps.x[i], ps.y[i], ps.z[i], depth);
        if (scan && ((near >> q) & 1u) == 0) continue;
        append(send[std::size_t(q)], record_of(ps, i, bins ? bins[i] : 0));
        sent_[std::size_t(q)].push_back(i);
      }
    }
    const std::vector<Bytes> got = comm_->exchange(send);
    // This rank's bodies first, then the ghosts (with their owners).
    all_ = ps;
    owned_ = n;
    owner_.clear();
    bins_.assign(n, 0);
    if (bins) std::copy_n(bins, n, bins_.begin());
    for (int q = 0; q < parts; ++q) {
      if (q == me) continue;
      for (const BodyRecord& r : records_of<BodyRecord>(got[std::size_t(q)], "ghosts")) {
        add_body(all_, r);
        owner_.push_back(q);
        bins_.push_back(std::uint8_t(r.bin));
      }
    }
    const std::vector<IndexPair> pairs = find_contact_pairs(
        all_, collisions::kCandidateSkin, options_.threads, Device::Cpu, options_.search);
    const std::size_t total = all_.size();
    // Union-find over the bodies (the search's positions fit 32 bits: ContactGrid).
    parent_.resize(total);
    std::iota(parent_.begin(), parent_.end(), std::uint32_t{0});
    paired_.assign(total, 0);
    for (const IndexPair& p : pairs) {
      paired_[p.a] = paired_[p.b] = 1;
      const std::uint32_t a = root(p.a), b = root(p.b);
      if (a != b) parent_[std::max(a, b)] = std::min(a, b);
    }
    // Per cluster (at its root): whether it holds a body of this rank, and the index of its
    // body of smallest id.
    holds_mine_.assign(total, 0);
    smallest_.assign(total, total);
    for (std::size_t i = 0; i < total; ++i) {
      if (!paired_[i]) continue;
      const std::size_t r = root(i);
      if (i < n) holds_mine_[r] = 1;
      if (smallest_[r] == total || all_.id[i] < all_.id[smallest_[r]]) smallest_[r] = i;
    }
    // A ghost's partners are all here when it lies a reach inside the layer: within
    // depth - reach of this rank's box and (scanning) of a cell holding one of its bodies, a
    // partner is within depth of both, so its owner sent it.
    int incomplete = 0;
    const RankBox& mine = boxes[std::size_t(me)];
    for (std::size_t i = n; i < total && mine.has != 0; ++i) {
      if (!paired_[i] || !holds_mine_[root(i)]) continue;
      const double x = all_.x[i], y = all_.y[i], z = all_.z[i];
      if (distance_to(mine, x, y, z) + reach > depth ||
          (scan && ((cells.near(x, y, z, depth - reach) >> me) & 1u) == 0))
        incomplete = 1;
    }
    return comm_->max(incomplete) == 0;
  }

  /// Steps 3-4 (collective): the clusters whose smallest id is this rank's body, resolved by
  /// the one-process handler; every changed body written back here or sent to its owner.
  CollisionStats resolve_mine(ParticleSystem& ps, const ContactGate& gate, double detect_seconds) {
    const int parts = comm_->parts();
    const std::size_t n = ps.size(), total = all_.size();
    ParticleSystem cluster;
    cluster.dim = ps.dim;
    std::vector<std::size_t> from;   // cluster body -> index in all_
    std::vector<std::uint8_t> bins;  // the cluster's bin bytes (the gate's flags land here)
    for (std::size_t i = 0; i < total; ++i) {
      if (!paired_[i] || smallest_[root(i)] >= n) continue;
      add_body(cluster, record_of(all_, i));
      from.push_back(i);
      bins.push_back(bins_[i]);
    }
    // The accelerations and masses before the stage, for the merged bodies' (copies: the
    // resolution changes the masses and removes bodies).
    std::vector<double> kept[4] = {cluster.ax, cluster.ay, cluster.az, cluster.mass};
    const std::vector<std::uint64_t> ids = cluster.id;
    CollisionStats stats;
    if (!from.empty())
      stats = local_->resolve(cluster,
                              gate.bins ? ContactGate{bins.data(), gate.ready_bin} : ContactGate{});
    stats.detect_seconds += detect_seconds;
    if (!stats.merged.empty()) merged_accelerations(ids, kept, stats.merged, cluster);
    if (options_.model == CollisionModel::Merge && options_.G != 0)
      stats.energy_lost -=
          merges_against_the_rest(all_, owned_, from, cluster, stats.merges > 0, options_, *comm_);
    // The survivors by id (merged-away bodies are gone from the cluster).
    std::unordered_map<std::uint64_t, std::size_t> survivor;
    for (std::size_t k = 0; k < cluster.size(); ++k) survivor.emplace(cluster.id[k], k);
    std::vector<Bytes> back(static_cast<std::size_t>(parts));
    std::vector<std::size_t> removed;
    int changed = 0;
    for (std::size_t k = 0; k < from.size(); ++k) {
      const std::size_t i = from[k];
      const auto it = survivor.find(all_.id[i]);
      const bool alive = it != survivor.end();
      const std::uint8_t flag = bins[k] & kContactFlag;
      BodyRecord now = alive ? record_of(cluster, it->second, flag)
                             : BodyRecord{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, all_.id[i], 0, flag};
      now.alive = alive ? 1u : 0u;
      const BodyRecord was = record_of(all_, i, bins_[i] & kContactFlag);
      if (alive && std::memcmp(&now, &was, sizeof now) == 0) continue;  // untouched
      changed = 1;
      if (i < n) {
        apply(ps, i, now, removed, gate.bins);
      } else {
        append(back[std::size_t(owner_[i - n])], now);
      }
    }
    // The new states of this rank's ghosts elsewhere: each a body this rank sent there.
    const std::vector<Bytes> got = comm_->exchange(back);
    for (int q = 0; q < parts; ++q) {
      const std::vector<BodyRecord> updates = records_of<BodyRecord>(got[std::size_t(q)], "states");
      if (updates.empty()) continue;
      std::unordered_map<std::uint64_t, std::size_t> index;
      for (std::size_t i : sent_[std::size_t(q)]) index.emplace(ps.id[i], i);
      for (const BodyRecord& r : updates) {
        const auto it = index.find(r.id);
        if (it == index.end())
          throw Error(fmt::format(
              "collisions on owned bodies: rank {} sent the state of body {}, not sent to it", q,
              r.id));
        apply(ps, it->second, r, removed, gate.bins);
        changed = 1;
      }
    }
    // Every rank alike: a rank that evaluates forces because its accelerations are stale
    // does so collectively.
    if (comm_->max(changed) != 0) ps.invalidate_accelerations();
    std::sort(removed.begin(), removed.end());
    removed.erase(std::unique(removed.begin(), removed.end()), removed.end());
    if (!removed.empty()) {
      if (removed_) removed_(removed);
      ps.remove(removed);
    }
    return stats;
  }

  static void apply(ParticleSystem& ps, std::size_t i, const BodyRecord& r,
                    std::vector<std::size_t>& removed, std::uint8_t* bins) {
    if (bins) bins[i] |= std::uint8_t(r.bin & kContactFlag);
    if (r.alive == 0) {
      removed.push_back(i);
      return;
    }
    ps.x[i] = r.x, ps.y[i] = r.y, ps.z[i] = r.z;
    ps.vx[i] = r.vx, ps.vy[i] = r.vy, ps.vz[i] = r.vz;
    ps.mass[i] = r.mass, ps.radius[i] = r.radius;
    ps.ax[i] = r.ax, ps.ay[i] = r.ay, ps.az[i] = r.az;
  }

  /// Collective: the run's figures on every rank.
  void sum_over_ranks(CollisionStats& s) const {
    double sums[5] = {double(s.contacts), double(s.candidates), double(s.merges),
                      double(s.searches), s.energy_lost};
    comm_->sum(sums, 5);
    s.contacts = std::uint64_t(sums[0]);
    s.candidates = std::uint64_t(sums[1]);
    s.merges = std::uint64_t(sums[2]);
    s.searches = std::uint64_t(sums[3]);
    s.energy_lost = sums[4];
    s.passes = std::uint64_t(comm_->max(int(std::min<std::uint64_t>(s.passes, 1u << 30))));
    Bytes out;
    append(out, s.max_overlap);
    for (const Bytes& b : comm_->all_gather(out))
      for (double v : records_of<double>(b, "overlaps")) s.max_overlap = std::max(s.max_overlap, v);
  }

  std::unique_ptr<CollisionHandler> local_;
  CollisionOptions options_;
  std::shared_ptr<ForceReducer> comm_;
  RemovedBodies removed_;
  // The last find_clusters': this rank's bodies and its ghosts, the ghosts' owners, the
  // clusters (union-find), and the bodies sent to each rank as its ghosts.
  ParticleSystem all_;
  std::size_t owned_ = 0;  // all_'s first owned_ bodies are this rank's
  std::vector<int> owner_;
  std::vector<std::uint32_t> parent_;  // union-find: collisions::surviving
  std::vector<std::size_t> smallest_;
  std::uint32_t root(std::size_t i) { return collisions::surviving(parent_, std::uint32_t(i)); }
  std::vector<char> paired_, holds_mine_;
  std::vector<std::uint8_t> bins_;  // all_'s bin bytes (hierarchical steps; else 0)
  std::vector<std::vector<std::size_t>> sent_;
};

}  // namespace

std::unique_ptr<CollisionHandler> make_domain_collisions(std::unique_ptr<CollisionHandler> local,
                                                         const CollisionOptions& options,
                                                         std::shared_ptr<ForceReducer> comm,
                                                         RemovedBodies removed) {
  return std::make_unique<DomainCollisions>(std::move(local), options, std::move(comm),
                                            std::move(removed));
}

}  // namespace nbody::parallel
