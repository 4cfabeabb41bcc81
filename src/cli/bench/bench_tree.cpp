// nbody bench tree: the Barnes-Hut solver on a Plummer sphere, time per evaluation split
// into build and walk, interactions per body, against the direct sum at the same N.
#include <algorithm>
#include <chrono>
#include <memory>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/bench/bench_common.hpp"
#include "nbody/build_info.hpp"
#include "nbody/error.hpp"
#include "nbody/gravity.hpp"
#include "nbody/initial_conditions.hpp"

namespace nbody::cli::bench {

void bench_tree(const BenchArgs& a) {
  std::FILE* human = a.json ? stderr : stdout;
  const BuildInfo info = build_info();
  GravityOptions g;
  g.algorithm = GravityAlgorithm::Tree;
  g.theta = a.theta;
  g.quadrupole = a.quadrupole;
  g.mac = parse_opening_criterion(a.mac);
  g.alpha = a.alpha;
  // Resolved once, so the direct sum it is compared with runs at the same precision.
  g.precision = resolve_precision(a.precision == "float"    ? Precision::Float
                                  : a.precision == "double" ? Precision::Double
                                                            : Precision::Auto,
                                  GravityAlgorithm::Tree);
  const std::string precision(to_string(g.precision));
  g.threads = a.threads;
  g.softening = softening_or(a, kBenchSoftening);
  auto tree = make_gravity_solver(g);  // before the set-up work: fails fast when unavailable
  ModelOptions model;  // Plummer: the centrally concentrated case a tree is built for
  model.n = a.n;
  model.seed = 42;
  ParticleSystem ps = generate(model);
  const int threads = a.threads > 0 ? a.threads : info.max_threads;
  fmt::print(human, "tree (Barnes-Hut), Plummer N = {}, precision {}, {}, {}, softening = {:g}\n",
             a.n, precision, criterion_label(g), a.quadrupole ? "quadrupole" : "monopole",
             g.softening);
  fmt::print(human, "device: cpu, CPU: {}, {} threads\n", info.cpu_model, threads);
  std::fflush(human);

  // Like time_evaluations, but keeping each evaluation's build/walk split and interaction
  // count; each is reported as its median over the evaluations.
  using Clock = std::chrono::steady_clock;
  tree->compute_accelerations(ps);  // warm-up
  std::vector<double> total, build, walk, interactions;
  const auto start = Clock::now();
  while (total.size() < 3 ||
         (std::chrono::duration<double>(Clock::now() - start).count() < a.seconds &&
          total.size() < 1000)) {
    const auto t0 = Clock::now();
    tree->compute_accelerations(ps);
    total.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    const SolverStats st = tree->stats();
    build.push_back(st.build_seconds);
    walk.push_back(st.walk_seconds);
    interactions.push_back(st.interactions_per_body);
  }
  const double seconds = median_of(total);
  const double build_s = median_of(build), walk_s = median_of(walk),
               per_body = median_of(interactions);

  // The direct sum at the same precision and threads, for the speed-up.
  GravityOptions d = g;
  d.algorithm = GravityAlgorithm::Direct;
  auto direct = make_gravity_solver(d);
  const bool measured = a.n <= kDirectMeasuredMaxN;
  double direct_seconds = 0;
  if (measured) {
    direct_seconds = time_evaluations(*direct, ps, a.seconds);
  } else {
    model.n = kDirectProbeN;
    ParticleSystem probe = generate(model);
    const double scale = double(a.n) / double(kDirectProbeN);
    direct_seconds = time_evaluations(*direct, probe, a.seconds) * scale * scale;
  }
  const std::string how =
      measured ? "measured" : fmt::format("estimated: N = {} timed, scaled by N^2", kDirectProbeN);

  fmt::print(human, "{:<28} {:>12} {:>12} {:>12} {:>18}\n", "solver", "ms/eval", "build ms",
             "walk ms", "interactions/body");
  fmt::print(human, "{:<28} {:>12.3f} {:>12.3f} {:>12.3f} {:>18.1f}\n", tree->name(), 1e3 * seconds,
             1e3 * build_s, 1e3 * walk_s, per_body);
  fmt::print(human, "{:<28} {:>12.3f}   ({})\n", direct->name(), 1e3 * direct_seconds, how);
  fmt::print(human, "speed-up over the direct sum: {:.3g}x ({} tree evaluations, median)\n",
             direct_seconds / seconds, total.size());
  if (a.json) {
    const nlohmann::ordered_json j = {{"suite", "tree"},
                                      {"n", a.n},
                                      {"device", "cpu"},
                                      {"cpu", info.cpu_model},
                                      {"threads", threads},
                                      {"precision", precision},
                                      {"theta", a.theta},
                                      {"mac", a.mac},
                                      {"alpha", a.alpha},
                                      {"quadrupole", a.quadrupole},
                                      {"softening", g.softening},
                                      {"solver", tree->name()},
                                      {"evaluations", total.size()},
                                      {"seconds_per_eval", seconds},
                                      {"build_seconds", build_s},
                                      {"walk_seconds", walk_s},
                                      {"interactions_per_body", per_body},
                                      {"direct_solver", direct->name()},
                                      {"direct_seconds_per_eval", direct_seconds},
                                      {"direct_measured", measured},
                                      {"speedup", direct_seconds / seconds}};
    fmt::print("{}\n", j.dump(2));
  }
}

}  // namespace nbody::cli::bench
