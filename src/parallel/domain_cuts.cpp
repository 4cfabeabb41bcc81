// Cutting the key line into P pieces of equal cost (domain.hpp's balance), with histograms
// of the keys over the tree's cells: no rank sees another rank's keys, only sums.
//
// A cut k aims at the prefix cost T_k = k * total / P. Round 0 histograms the root cell
// over the cells TOP levels down (4096 buckets) with one all-reduce of cost and count; the
// bucket boundaries are the candidate cuts. A cut whose best candidate is within
// tolerance / 2 of the mean of T_k is done; the others descend into the bucket that holds
// T_k, and the next round histograms only those buckets, STEP levels deeper. All pending
// cuts sit at the same level in a round, so their cells are identical or disjoint.
// With a memory cap each cut must also keep the body counts in a window; the windows of
// different cuts depend on each other, so cuts the first pass leaves over the cap are
// redone one at a time (sequential rounds; only when the cap binds).
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "nbody/error.hpp"
#include "parallel/domain.hpp"

namespace nbody::parallel {
namespace {

// Levels histogrammed by the first round and by each later one: 4096 buckets (3D: 8^4,
// 2D: 4^6), then 512 (8^3) or 256 (4^4) per pending cut.
int top_levels(int dim) {
  return dim == 2 ? 6 : 4;
}
int step_levels(int dim) {
  return dim == 2 ? 4 : 3;
}

struct Cut {
  double target = 0;       // prefix cost aimed at
  double count_lo = 0;     // allowed prefix counts (inclusive)
  double count_hi = 0;     //
  double count_slack = 0;  // how near a window edge is near enough (the cap binds there)
  std::uint64_t cell = 0;  // first key of the cell being refined
  int level = 0;           // its level
  double base_cost = 0;    // global prefix cost and count below `cell`
  double base_count = 0;   //
  bool done = false;       //
  bool met = true;         // the tolerance was reached
  std::uint64_t key = 0;   // the result: a cell boundary
  double key_count = 0;    // the prefix count there
};

// The histogram work of a rank whose keys and costs are host arrays.
class HostKeys final : public KeyHistogram {
 public:
  HostKeys(const std::vector<std::uint64_t>& keys, const std::vector<double>& cost)
      : keys_(keys), cost_(cost) {}
  void add(const std::vector<std::uint64_t>& cells, std::uint64_t width, int shift,
           std::size_t buckets, double* h) const override {
    for (std::size_t i = 0; i < keys_.size(); ++i) {
      const std::uint64_t k = keys_[i];
      const auto it = std::upper_bound(cells.begin(), cells.end(), k);
      if (it == cells.begin()) continue;
      const std::size_t c = std::size_t(it - cells.begin()) - 1;
      if (k - cells[c] >= width) continue;
      const std::size_t b = c * buckets + std::size_t((k - cells[c]) >> shift);
      h[2 * b] += cost_.empty() ? 1.0 : cost_[i];
      h[2 * b + 1] += 1.0;
    }
  }
  [[nodiscard]] bool bad_cost() const override {
    if (!cost_.empty() && cost_.size() != keys_.size()) return true;
    return std::any_of(cost_.begin(), cost_.end(),
                       [](double w) { return !(w > 0 && std::isfinite(w)); });
  }

 private:
  const std::vector<std::uint64_t>& keys_;
  const std::vector<double>& cost_;
};

struct Local {
  const KeyHistogram& keys;
  int dim;
};

// One round: every pending cut's cell histogrammed `sub - level` levels deeper; returns the
// summed histogram ((cost, count) per bucket, cells in `cells` order) and fills `cells`.
std::vector<double> histogram(const Local& in, const std::vector<Cut*>& pending, int level, int sub,
                              std::vector<std::uint64_t>& cells, ForceReducer& comm, double extra) {
  cells.clear();
  for (const Cut* c : pending) cells.push_back(c->cell);
  std::sort(cells.begin(), cells.end());
  cells.erase(std::unique(cells.begin(), cells.end()), cells.end());
  const std::size_t buckets = std::size_t(1) << (in.dim * (sub - level));
  // + 1 slot: a flag every rank must see at once (round 0: bad costs on some rank).
  std::vector<double> h(2 * buckets * cells.size() + 1, 0.0);
  h.back() = extra;
  in.keys.add(cells, cell_width(in.dim, level), in.dim * (key_levels(in.dim) - sub), buckets,
              h.data());
  comm.sum(h.data(), h.size());
  return h;
}

// Decides cut c from its cell's buckets (cost, count pairs); descends when it can improve.
void resolve(Cut& c, const double* h, std::size_t buckets, int sub, int dim, double tol_abs,
             int max_level) {
  const std::uint64_t sub_width = cell_width(dim, sub);
  // Prefix cost and count at boundary j of the cell.
  std::vector<double> pc(buckets + 1), pn(buckets + 1);
  pc[0] = c.base_cost, pn[0] = c.base_count;
  for (std::size_t s = 0; s < buckets; ++s) {
    pc[s + 1] = pc[s] + h[2 * s];
    pn[s + 1] = pn[s] + h[2 * s + 1];
  }
  auto in_window = [&](std::size_t j) { return pn[j] >= c.count_lo && pn[j] <= c.count_hi; };
  std::size_t best = buckets + 1;
  for (std::size_t j = 0; j <= buckets; ++j)
    if (in_window(j) &&
        (best > buckets || std::abs(pc[j] - c.target) < std::abs(pc[best] - c.target)))
      best = j;
  auto finish = [&](std::size_t j, bool met) {
    c.done = true, c.met = met;
    c.key = c.cell + j * sub_width;
    c.key_count = pn[j];
  };
  auto descend = [&](std::size_t s) {
    c.cell += s * sub_width, c.level = sub;
    c.base_cost = pc[s], c.base_count = pn[s];
  };
  if (best <= buckets && std::abs(pc[best] - c.target) <= tol_abs) return finish(best, true);
  const bool deeper = sub < max_level;
  if (best > buckets) {
    // No boundary in the count window: it lies inside one bucket.
    std::size_t s = 0;
    while (s + 1 < buckets && pn[s + 1] < c.count_lo) ++s;
    if (!deeper)
      throw Error(
          fmt::format("balance: bodies sharing one key hold more than the memory cap allows "
                      "(the piece must end between {} and {} bodies)",
                      c.count_lo, c.count_hi));
    return descend(s);
  }
  if (!deeper) return finish(best, false);
  // The bucket where the prefix cost crosses the target, when the window allows a cut in it.
  for (std::size_t s = 0; s < buckets; ++s) {
    if (pc[s] < c.target && c.target < pc[s + 1] && pn[s + 1] >= c.count_lo && pn[s] <= c.count_hi)
      return descend(s);
  }
  // Else the window's edge is nearest the target: refine the bucket beside the best cut,
  // toward the target, when it holds cost and the edge is not near enough already (the cap
  // binds: the cut ends near the edge, at a coarse cell boundary rather than a key).
  const bool up = pc[best] < c.target;
  const double gap = up ? c.count_hi - pn[best] : pn[best] - c.count_lo;
  const std::size_t s = up ? best : best - 1;  // (best 0 and down: s wraps, below)
  if (s < buckets && h[2 * s] > 0 && gap > c.count_slack) return descend(s);
  finish(best, false);
}

// Rounds until every cut in `pending` is done (all at one level); returns the rounds taken.
int refine(const Local& in, std::vector<Cut*> pending, ForceReducer& comm, double tol_abs) {
  const int dim = in.dim, max_level = key_levels(dim);
  int rounds = 0;
  std::vector<std::uint64_t> cells;
  while (!pending.empty()) {
    const int level = pending.front()->level;
    const int sub = std::min(max_level, level + (level == 0 ? top_levels(dim) : step_levels(dim)));
    const auto h = histogram(in, pending, level, sub, cells, comm, 0.0);
    ++rounds;
    const std::size_t buckets = std::size_t(1) << (dim * (sub - level));
    std::vector<Cut*> next;
    for (Cut* c : pending) {
      const auto at = std::lower_bound(cells.begin(), cells.end(), c->cell) - cells.begin();
      resolve(*c, h.data() + 2 * buckets * std::size_t(at), buckets, sub, dim, tol_abs, max_level);
      if (!c->done) next.push_back(c);
    }
    pending = std::move(next);
  }
  return rounds;
}

}  // namespace

DomainCuts balance(const std::vector<std::uint64_t>& keys, const std::vector<double>& cost, int dim,
                   ForceReducer& comm, const BalanceOptions& options) {
  return balance(HostKeys(keys, cost), dim, comm, options);
}

DomainCuts balance(const KeyHistogram& local, int dim, ForceReducer& comm,
                   const BalanceOptions& options) {
  const int parts = comm.parts();
  // Bad input on any rank must stop every rank at once: it rides in the first all-reduce.
  const double bad = local.bad_cost() ? 1.0 : 0.0;
  const Local in{local, dim};

  // Round 0: the root's histogram gives the totals (and any rank's bad input), then every
  // cut's first decision.
  const int sub0 = std::min(key_levels(dim), top_levels(dim));
  std::vector<std::uint64_t> cells;
  Cut root;
  const auto h0 = histogram(in, {&root}, 0, sub0, cells, comm, bad);
  int rounds = 1;
  if (h0.back() > 0)
    throw Error("balance: every body needs one cost, positive and finite (some rank's was not)");
  const std::size_t buckets0 = std::size_t(1) << (dim * sub0);
  double total = 0, n = 0;
  for (std::size_t b = 0; b < buckets0; ++b) total += h0[2 * b], n += h0[2 * b + 1];
  const auto cap = double(options.max_bodies_per_rank);
  if (cap > 0 && cap * parts < n)
    throw Error(fmt::format("balance: {} bodies do not fit {} ranks of at most {} bodies each", n,
                            parts, options.max_bodies_per_rank));
  const double tol_abs = 0.5 * options.tolerance * total / parts;

  std::vector<Cut> cuts(std::size_t(std::max(parts - 1, 0)));
  std::vector<Cut*> pending;
  for (int k = 1; k < parts; ++k) {
    Cut& c = cuts[std::size_t(k - 1)];
    c.target = total * k / parts;
    c.count_lo = cap > 0 ? std::max(0.0, n - (parts - k) * cap) : 0.0;
    c.count_hi = cap > 0 ? std::min(n, k * cap) : n;
    c.count_slack = 0.5 * options.tolerance * cap;
    resolve(c, h0.data(), buckets0, sub0, dim, tol_abs, key_levels(dim));
    if (!c.done) pending.push_back(&c);
  }
  rounds += refine(in, pending, comm, tol_abs);

  // The memory cap: piece k holds count(cut k+1) - count(cut k) <= cap. Redo, in order, each
  // cut that leaves the piece before it over the cap (the window keeps the rest feasible).
  if (cap > 0) {
    double prev = 0;
    std::uint64_t prev_key = 0;
    for (int k = 1; k < parts; ++k) {
      Cut& c = cuts[std::size_t(k - 1)];
      const double lo = std::max(n - (parts - k) * cap, prev), hi = prev + cap;
      if (c.key_count < lo || c.key_count > hi || c.key < prev_key) {
        const double target = c.target;
        c = Cut{};
        c.target = target, c.count_lo = lo, c.count_hi = hi;
        c.count_slack = 0.5 * options.tolerance * cap;
        rounds += refine(in, {&c}, comm, tol_abs);
        c.met = false;
      }
      prev = c.key_count, prev_key = c.key;
    }
  }

  DomainCuts out;
  out.rounds = rounds;
  out.first.assign(std::size_t(parts) + 1, 0);
  out.first.back() = kKeyEnd;
  for (int k = 1; k < parts; ++k) {
    const Cut& c = cuts[std::size_t(k - 1)];
    out.first[std::size_t(k)] = std::max(c.key, out.first[std::size_t(k - 1)]);
    out.tolerance_met = out.tolerance_met && c.met;
  }
  // The finest level whose cell boundaries hold every interior cut.
  for (int k = 1; k < parts; ++k) {
    const std::uint64_t key = out.first[std::size_t(k)];
    int l = 0;
    while (l < key_levels(dim) && key % cell_width(dim, l) != 0) ++l;
    out.level = std::max(out.level, l);
  }
  return out;
}

}  // namespace nbody::parallel
