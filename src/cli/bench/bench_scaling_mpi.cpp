// nbody bench scaling-mpi: the force work shared by P = 1, 2, 4, ... MPI ranks (one per
// GPU), strong scaling (N fixed) and weak scaling (N/P fixed), for the direct sum and the
// tree (docs/distributed.md). Run it under mpirun with the largest P: every
// configuration uses the first P ranks of the world, the others wait.
//
// Efficiency, against the fewest ranks timed (P0 = --from-ranks, default 1). Strong:
// P0 T0 / (P TP). Weak: the work per step grows as N^2 for the direct sum and about N log N
// for the tree, so the efficiency is (W_P / W_0) P0 / P x T0 / TP: 1 when P ranks do P / P0
// times the work of P0 in the same time.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/bench/bench_common.hpp"
#include "nbody/build_info.hpp"
#include "nbody/distributed.hpp"
#include "nbody/error.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/input_error.hpp"
#include "nbody/simulation.hpp"

namespace nbody::cli::bench {

namespace {

struct Row {
  GravityAlgorithm algorithm;
  std::string scaling;
  int ranks;
  std::size_t n;
  int steps;
  double ms_per_step, efficiency;
  // Several ranks: the gravity time's slowest rank over the mean; a decomposed run also
  // the bytes all ranks sent a step, the bodies that migrated a step and the measured
  // work's imbalance under the cut (DecompositionStats).
  double load_balance = 1;
  bool decomposed = false;
  double bytes_per_step = 0, migrated_per_step = 0, work_imbalance = 1;
  // GPU tree ranks: the slowest rank's milliseconds a step of the essential trees' work beside
  // the local walk (the pieces described to the trees received), and the share of it the walk
  // hid (the same rank's).
  double exchange_ms = 0, hidden = 0;
  // GPUs: the most device memory a rank's run added (after its first step), and that per
  // body the rank holds (N / P).
  double gpu_bytes = 0, gpu_bytes_per_body = 0;
  std::string allocations{};  // --timings on GPUs: what the fullest rank's buffers hold
  std::string beside{};       // --timings, GPU tree ranks: the parts of the work beside the walk
  std::string update{};       // --timings, GPU tree ranks: the parts of the domain's update
};

/// The largest of each rank's value (collective).
double largest(ForceReducer& group, double value) {
  ForceReducer::Bytes mine(sizeof value);
  std::memcpy(mine.data(), &value, sizeof value);
  for (const auto& b : group.all_gather(mine)) {
    double v = 0;
    std::memcpy(&v, b.data(), sizeof v);
    value = std::max(value, v);
  }
  return value;
}

/// The text of the rank whose value is the largest, with its bodies held (collective).
std::string of_largest(ForceReducer& group, double value, std::size_t bodies,
                       const std::string& text) {
  const std::string mine = fmt::format("rank {} ({} bodies): {}", group.part(), bodies, text);
  ForceReducer::Bytes out(sizeof value + mine.size());
  std::memcpy(out.data(), &value, sizeof value);
  std::memcpy(out.data() + sizeof value, mine.data(), mine.size());
  double most = -1;
  std::string chosen;
  for (const auto& b : group.all_gather(out)) {
    double v = 0;
    if (b.size() < sizeof v) continue;
    std::memcpy(&v, b.data(), sizeof v);
    if (v > most) most = v, chosen.assign(b.begin() + sizeof v, b.end());
  }
  return chosen;
}

ModelOptions plummer(std::size_t n) {
  ModelOptions m;
  m.model = "plummer";
  m.n = n;
  m.seed = 11;
  return m;
}

/// Plummer spheres, generated once per N (the largest take seconds).
const ParticleSystem& bodies(std::size_t n) {
  static std::map<std::size_t, ParticleSystem> cache;
  auto it = cache.find(n);
  if (it == cache.end()) it = cache.emplace(n, generate(plummer(n))).first;
  return it->second;
}

/// The run of N bodies on the group's ranks: a decomposed one from each rank's own window of
/// the same sphere (generate_window: no rank holds all N), else from the whole sphere.
Simulation simulation(std::size_t n, const SimulationOptions& o,
                      const std::shared_ptr<ForceReducer>& group) {
  if (!Simulation::decomposes(o, 3, group.get())) return Simulation(bodies(n), o, group);
  return Simulation::from_share(generate_share(plummer(n), *group), n, o, group);
}

/// Milliseconds per step on the first `ranks` ranks (rank 0's clock); -1 on the others.
/// `stages`: rank 0's milliseconds per step of each force stage and of the rest.
double time_steps(const BenchArgs& a, GravityAlgorithm algorithm, std::size_t n, int ranks,
                  int& steps, std::string& stages, Row& row) {
  const std::shared_ptr<ForceReducer> all = world();
  const std::shared_ptr<ForceReducer> group = first_ranks(ranks);  // collective
  double ms = -1;
  int chosen = 0;
  if (group) {
    GravityOptions g;
    g.algorithm = algorithm;
    g.device = a.device == "gpu" ? Device::Gpu : Device::Cpu;
    g.precision = Precision::Float;
    g.softening = softening_or(a, kBenchSoftening);
    g.theta = a.theta;
    const std::size_t memory_before = gpu_memory_used();
    Simulation sim = simulation(n, SimulationOptions{g, {}, {}, EnergyMethod::Auto}, group);
    using Clock = std::chrono::steady_clock;
    auto t0 = Clock::now();
    sim.step(1e-4);  // warm-up: allocations, the first force evaluation, NCCL set-up
    // Owned bodies: the first cuts weigh bodies by count, the next by measured time. At
    // least 2 more steps, then until a step makes no new cut (at most 8): a cut moves bodies
    // and changes the time (a CPU rank's cut also loops over every key on the host), so it
    // must not fall into the timed steps. Every rank counts the same cuts (collective).
    for (int w = 0; w < 8 && sim.decomposed(); ++w) {
      const std::uint64_t cuts = sim.decomposition().recuts;
      sim.step(1e-4);
      if (w >= 1 && sim.decomposition().recuts == cuts) break;
    }
    (void)sim.time();
    const double warm = std::chrono::duration<double>(Clock::now() - t0).count();
    if (g.device == Device::Gpu) {
      const std::size_t used = gpu_memory_used();
      const double mine = double(used > memory_before ? used - memory_before : 0);
      row.gpu_bytes = largest(*group, mine);
      row.gpu_bytes_per_body = row.gpu_bytes / (double(n) / group->parts());
      // --timings: what the rank that added the most holds (collective), its bodies first.
      if (a.timings)
        row.allocations = of_largest(*group, mine, sim.decomposed() ? sim.decomposition().owned : n,
                                     gpu_allocations(16));
    }
    // The same number of steps on every rank of the group: rank 0's choice.
    chosen = group->max(
        group->part() == 0 ? std::clamp(int(a.seconds / std::max(warm, 1e-6)), 3, 50) : 0);
    sim.times() = {};  // the stage times of the timed steps only
    sim.gravity_stages() = {};
    const DecompositionStats before = sim.decomposition();
    (void)group->max(0);  // start together
    t0 = Clock::now();
    // The GPU path's step() returns when its stream is done, so the loop times the steps
    // alone (not the download of the bodies that sim.particles() would add).
    for (int s = 0; s < chosen; ++s) sim.step(1e-4);
    (void)group->max(0);
    ms = 1e3 * std::chrono::duration<double>(Clock::now() - t0).count() / chosen;
    double gravity = sim.times().get("gravity"), mean = gravity;
    group->sum(&mean, 1);
    mean /= group->parts();
    row.load_balance = mean > 0 ? largest(*group, gravity) / mean : 1.0;
    const DecompositionStats& after = sim.decomposition();
    row.decomposed = sim.decomposed();
    double moved[2] = {double(after.bytes_sent - before.bytes_sent),
                       double(after.migrated - before.migrated)};
    group->sum(moved, 2);
    row.bytes_per_step = moved[0] / chosen;
    row.migrated_per_step = moved[1] / chosen;
    row.work_imbalance = after.imbalance;
    const double exchange = 1e3 * (after.exchange_seconds - before.exchange_seconds) / chosen;
    const double hidden = 1e3 * (after.hidden_seconds - before.hidden_seconds) / chosen;
    row.exchange_ms = largest(*group, exchange);
    // The share hidden on the rank whose exchange took longest (ties: any of them).
    double share[2] = {exchange >= row.exchange_ms && exchange > 0 ? hidden / exchange : 0, 0};
    share[1] = share[0] > 0 ? 1 : 0;
    group->sum(share, 2);
    row.hidden = share[1] > 0 ? share[0] / share[1] : 0;
    // Where the time goes, each figure as "rank 0's/the slowest rank's" (a collective
    // waits for the slowest).
    const double per = 1e3 / double(chosen);
    const auto both = [&](double seconds) {
      const double mine = seconds * per;
      const double slowest = 1e-3 * group->max(int(std::lround(mine * 1e3)));  // microseconds
      return group->parts() > 1 ? fmt::format("{:.1f}/{:.1f}", mine, slowest)
                                : fmt::format("{:.1f}", mine);
    };
    double staged = 0;
    for (const auto& [name, seconds] : sim.gravity_stages().entries()) {
      stages += fmt::format(" {} {}", name, both(seconds));
      staged += seconds;
    }
    stages +=
        fmt::format(" | gravity {} (other {}) integrate {}", both(sim.times().get("gravity")),
                    both(sim.times().get("gravity") - staged), both(sim.times().get("integrate")));
    if (group->parts() > 1) stages += "  (rank 0/slowest rank)";
    if (row.exchange_ms > 0)  // every rank has the same parts (collective: both())
      for (const auto& [part, seconds] : after.beside.entries())
        row.beside += fmt::format(" {} {}", part, both(seconds - before.beside.get(part)));
    // GPU tree ranks: every rank updates its domain each evaluation (collective: both()).
    for (const auto& [part, seconds] : after.update.entries())
      row.update += fmt::format(" {} {}", part, both(seconds - before.update.get(part)));
  }
  if (all && all->parts() > 1) (void)all->max(0);  // the others wait here
  steps = chosen;
  return ms;
}

double work(GravityAlgorithm algorithm, std::size_t n) {
  const double x = double(n);
  return algorithm == GravityAlgorithm::Direct ? x * x : x * std::log2(std::max(x, 2.0));
}

}  // namespace

void bench_scaling_mpi(const BenchArgs& a, bool n_given) {
  const std::shared_ptr<ForceReducer> all = world();
  const int world_ranks = all ? all->parts() : 1;
  const bool root = !all || all->part() == 0;
  const bool gpu = a.device == "gpu";
  // Defaults: the targets on GPUs (4M direct, 64M tree), small on CPUs.
  const std::size_t direct_n = n_given ? a.n : gpu ? 4194304 : 8192;
  const std::size_t tree_n = n_given ? 16 * a.n : gpu ? 67108864 : 262144;
  if (a.from_ranks > world_ranks)
    throw input_error("--from-ranks", fmt::format("at most the {} ranks of mpirun", world_ranks),
                      std::to_string(a.from_ranks));
  // P0 = --from-ranks, then doubling up to the world's ranks. The efficiencies are against
  // P0 ranks (a base of P0 > 1 for N that one GPU cannot hold).
  const int p0 = a.from_ranks;
  std::vector<int> ps;
  for (int p = p0; p <= world_ranks; p *= 2) ps.push_back(p);
  if (ps.back() != world_ranks) ps.push_back(world_ranks);

  std::vector<Row> rows;
  for (const GravityAlgorithm algorithm : {GravityAlgorithm::Direct, GravityAlgorithm::Tree}) {
    if (a.gravity != "both" && a.gravity != to_string(algorithm)) continue;
    const std::size_t n_fixed = algorithm == GravityAlgorithm::Direct ? direct_n : tree_n;
    for (const std::string scaling : {"strong", "weak"}) {
      if (a.scaling != "both" && a.scaling != scaling) continue;
      double t1 = 0;
      for (int p : ps) {
        // Weak: the largest P runs the strong-scaling N, so the biggest case is the same.
        const std::size_t n =
            scaling == "strong" ? n_fixed : n_fixed / std::size_t(world_ranks) * std::size_t(p);
        int steps = 0;
        std::string stages;
        Row row{algorithm, scaling, p, n, 0, 0, 0};
        const double ms = time_steps(a, algorithm, n, p, steps, stages, row);
        if (!root) continue;
        if (p == p0) t1 = ms;
        const std::size_t n1 =
            scaling == "strong" ? n_fixed : n_fixed / std::size_t(world_ranks) * std::size_t(p0);
        const double eff = scaling == "strong" ? double(p0) * t1 / (double(p) * ms)
                                               : work(algorithm, n) / work(algorithm, n1) *
                                                     double(p0) / double(p) * t1 / ms;
        row.steps = steps, row.ms_per_step = ms, row.efficiency = eff;
        rows.push_back(row);
        fmt::print(
            "{:<7} {:<7} P = {:<3} N = {:>10}  {:>10.3f} ms/step ({} steps)  efficiency "
            "{:.1f}%{}\n",
            to_string(algorithm), scaling, p, n, ms, steps, 100 * eff,
            p == 1 ? std::string()
                   : fmt::format("  balance {:.2f}{}", row.load_balance,
                                 row.decomposed
                                     ? fmt::format(" (work {:.2f}), {:.2f} MB and {:.0f} bodies "
                                                   "moved a step",
                                                   row.work_imbalance, 1e-6 * row.bytes_per_step,
                                                   row.migrated_per_step)
                                     : std::string(", replicated")));
        if (row.exchange_ms > 0)
          fmt::print(
              "        essential trees beside the local walk: {:.2f} ms a step, {:.0f}% hidden "
              "by it{}\n",
              row.exchange_ms, 100 * row.hidden,
              a.timings ? fmt::format(" (ms:{})", row.beside) : std::string());
        if (gpu)
          fmt::print("        GPU memory: {:.2f} GB a rank, {:.0f} bytes a body it holds\n",
                     1e-9 * row.gpu_bytes, row.gpu_bytes_per_body);
        if (a.timings) fmt::print("        ms/step:{}\n", stages);
        if (a.timings && !row.update.empty())
          fmt::print("        domain update before the forces, ms/step:{}\n", row.update);
        if (a.timings && !row.allocations.empty())
          fmt::print("        the most memory, {}\n", row.allocations);
        std::fflush(stdout);
      }
    }
  }
  if (root && a.json) {
    nlohmann::ordered_json j = nlohmann::ordered_json::array();
    for (const Row& r : rows) {
      const double theta = r.algorithm == GravityAlgorithm::Tree ? a.theta : 0.0;
      j.push_back({{"algorithm", to_string(r.algorithm)},
                   {"scaling", r.scaling},
                   {"ranks", r.ranks},
                   {"n", r.n},
                   {"steps", r.steps},
                   {"ms_per_step", r.ms_per_step},
                   {"efficiency", r.efficiency},
                   {"efficiency_base_ranks", a.from_ranks},
                   {"load_balance", r.load_balance},
                   {"decomposed", r.decomposed},
                   {"bytes_per_step", r.bytes_per_step},
                   {"migrated_per_step", r.migrated_per_step},
                   {"work_imbalance", r.work_imbalance},
                   {"exchange_ms_per_step", r.exchange_ms},
                   {"exchange_hidden", r.hidden},
                   {"gpu_bytes_per_rank", r.gpu_bytes},
                   {"gpu_bytes_per_body", r.gpu_bytes_per_body},
                   {"device", a.device},
                   {"precision", "float"},
                   {"theta", theta},
                   {"softening", softening_or(a, kBenchSoftening)}});
    }
    fmt::print("{}\n", j.dump(2));
  }
}

}  // namespace nbody::cli::bench
