// nbody bench collisions: time per step of the collision stage (detection + resolution)
// against N and against the number of resolution passes (seed 001, figs 7.10 and 7.16).
//
// The bodies are a uniform cube [-1, 1]^dim of equal spheres filling `volume fraction` of it,
// with velocities uniform in [-1, 1]. Two figures per configuration:
//   - "first": one stage on the random start, where most bodies overlap deeply (the worst
//     case: several searches as the pushes carry bodies beyond the skin);
//   - "step": a running simulation: the start is relaxed (untimed), then each step drifts the
//     bodies by 5% of a radius (untimed) and runs the stage (timed); the median is reported.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <numbers>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/bench/bench_common.hpp"
#include "cli/bench/report_suite_helpers.hpp"
#include "cli/bench/suite_report.hpp"
#include "nbody/build_info.hpp"
#include "nbody/collisions.hpp"
#include "nbody/error.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/input_error.hpp"

namespace nbody::cli::bench {

namespace {

using Clock = std::chrono::steady_clock;

constexpr double kDriftPerStep = 0.05;  // radii per step at the largest speed component
constexpr int kRelaxPasses = 50;        // untimed relaxation of the random start

struct StageTiming {
  std::size_t n = 0;
  int iterations = 1;
  double first_seconds = 0;
  double step_seconds = 0;  // median
  double detect_seconds = 0;
  double resolve_seconds = 0;
  double contacts = 0;  // per step, mean
  double candidates = 0;
  double searches = 0;
  double passes = 0;
  double merges = 0;
  std::size_t steps = 0;
};

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

ParticleSystem cloud(std::size_t n, int dim, double fraction) {
  ModelOptions m;
  m.model = "uniform-cube";
  m.n = n;
  m.seed = 42;
  m.dim = dim;
  m.velocity = 1.0;
  const double box = dim == 3 ? 8.0 : 4.0;  // volume (area) of [-1, 1]^dim
  const double per_body = fraction * box / double(n);
  m.radius = dim == 3 ? std::cbrt(per_body * 3 / (4 * std::numbers::pi))
                      : std::sqrt(per_body / std::numbers::pi);
  return generate(m);
}

StageTiming time_stage(const BenchArgs& a, std::size_t n, int iterations) {
  CollisionOptions o;
  o.model = parse_collision_model(a.collisions);
  o.restitution = a.restitution;
  o.iterations = iterations;
  o.search = parse_collision_search(a.collision_search);
  o.dim = a.dim;
  o.threads = a.threads;
  o.device = a.device == "gpu" ? Device::Gpu : Device::Cpu;
  auto handler = make_collision_handler(o);
  ParticleSystem start = cloud(n, a.dim, a.volume_fraction);
  StageTiming t;
  t.n = n;
  t.iterations = iterations;
  {
    ParticleSystem warm = start;  // first use: page in the handler's buffers
    (void)handler->resolve(warm);
    ParticleSystem ps = start;
    const auto t0 = Clock::now();
    const CollisionStats s = handler->resolve(ps);
    t.first_seconds =
        o.device == Device::Gpu ? s.detect_seconds + s.resolve_seconds : seconds_since(t0);
  }
  // Relax the start (positions only), then step.
  ParticleSystem ps = start;
  {
    ParticleSystem rest = start;
    for (auto* v : {&rest.vx, &rest.vy, &rest.vz}) std::fill(v->begin(), v->end(), 0.0);
    CollisionOptions r = o;
    r.model = CollisionModel::Bounce;
    r.iterations = kRelaxPasses;
    r.device = Device::Cpu;            // the same start on both devices
    r.search = CollisionSearch::Grid;  // and for both searches
    (void)make_collision_handler(r)->resolve(rest);
    ps.x = rest.x;
    ps.y = rest.y;
    ps.z = rest.z;
  }
  const double dt = kDriftPerStep * start.radius.front();  // |v| components <= 1
  std::vector<double> samples;
  double detect = 0, resolve = 0, contacts = 0, candidates = 0, searches = 0, passes = 0,
         merges = 0;
  const auto begin = Clock::now();
  while (samples.size() < 5 || (seconds_since(begin) < a.seconds && samples.size() < 200)) {
    for (std::size_t i = 0; i < ps.size(); ++i) {
      ps.x[i] += ps.vx[i] * dt;
      ps.y[i] += ps.vy[i] * dt;
      ps.z[i] += ps.vz[i] * dt;
    }
    const auto t0 = Clock::now();
    const CollisionStats s = handler->resolve(ps);
    // On the GPU the handler copies the bodies in and out around the stage; a resident
    // run does not, so the stage's own time (detection + resolution) is what counts.
    samples.push_back(o.device == Device::Gpu ? s.detect_seconds + s.resolve_seconds
                                              : seconds_since(t0));
    detect += s.detect_seconds;
    resolve += s.resolve_seconds;
    contacts += double(s.contacts);
    candidates += double(s.candidates);
    searches += double(s.searches);
    passes += double(s.passes);
    merges += double(s.merges);
  }
  const double k = double(samples.size());
  t.steps = samples.size();
  t.step_seconds = median_of(samples);
  t.detect_seconds = detect / k;
  t.resolve_seconds = resolve / k;
  t.contacts = contacts / k;
  t.candidates = candidates / k;
  t.searches = searches / k;
  t.passes = passes / k;
  t.merges = merges / k;
  return t;
}

void print_header(std::FILE* out) {
  fmt::print(out, "{:>8} {:>5} {:>10} {:>10} {:>8} {:>7} {:>10} {:>10} {:>10} {:>10}\n", "N",
             "iters", "contacts", "candidates", "searches", "passes", "detect ms", "resolve ms",
             "ms/step", "first ms");
}

void print_row(std::FILE* out, const StageTiming& t) {
  fmt::print(
      out,
      "{:>8} {:>5} {:>10.0f} {:>10.0f} {:>8.2f} {:>7.2f} {:>10.3f} {:>10.3f} {:>10.3f} {:>10.3f}\n",
      t.n, t.iterations, t.contacts, t.candidates, t.searches, t.passes, 1e3 * t.detect_seconds,
      1e3 * t.resolve_seconds, 1e3 * t.step_seconds, 1e3 * t.first_seconds);
  std::fflush(out);
}

nlohmann::ordered_json to_json(const StageTiming& t) {
  return {{"n", t.n},
          {"iterations", t.iterations},
          {"contacts_per_step", t.contacts},
          {"candidates_per_step", t.candidates},
          {"searches_per_step", t.searches},
          {"passes_per_step", t.passes},
          {"merges_per_step", t.merges},
          {"detect_seconds", t.detect_seconds},
          {"resolve_seconds", t.resolve_seconds},
          {"seconds_per_step", t.step_seconds},
          {"first_stage_seconds", t.first_seconds},
          {"steps", t.steps}};
}

}  // namespace

void bench_collisions(const BenchArgs& a) {
  std::FILE* human = a.json ? stderr : stdout;
  const BuildInfo info = build_info();
  const int threads = a.threads > 0 ? a.threads : info.max_threads;
  if (!(a.volume_fraction > 0 && a.volume_fraction < 1)) {
    throw input_error("--volume-fraction", "must be between 0 and 1", a.volume_fraction);
  }
  (void)parse_collision_model(a.collisions);
  if (a.collisions == "none")
    throw input_error("--collisions", "nothing to time (use bounce or merge)", "none");
  fmt::print(
      human, "collisions: {} ({} search) on the {}, {}D uniform cloud, volume fraction {:g}, {}\n",
      a.collisions, a.collision_search, a.device == "gpu" ? "GPU" : "CPU", a.dim, a.volume_fraction,
      a.device == "gpu"
          ? fmt::format("GPU: {}", gpu_devices().empty() ? "?" : gpu_devices().front().name)
          : fmt::format("{} threads, CPU: {}", threads, info.cpu_model));
  fmt::print(human,
             "ms/step: median stage of a running cloud (5% of a radius drift per step); first "
             "ms: one stage on the random, overlapping start\n");

  // Against N (seed 001 fig 7.10), up to -n.
  const int iterations = a.iterations > 0 ? a.iterations : 1;
  std::vector<std::size_t> sizes;
  for (std::size_t n : {1000, 3000, 10000, 30000, 100000, 300000, 1000000})
    if (n < a.n) sizes.push_back(n);
  sizes.push_back(a.n);
  nlohmann::ordered_json by_n = nlohmann::ordered_json::array();
  fmt::print(human, "\ntime per step against N ({} iteration(s))\n", iterations);
  print_header(human);
  for (std::size_t n : sizes) {
    const StageTiming t = time_stage(a, n, iterations);
    print_row(human, t);
    by_n.push_back(to_json(t));
  }

  // Against the number of passes at N (seed 001 fig 7.16).
  nlohmann::ordered_json by_iterations = nlohmann::ordered_json::array();
  if (a.iterations == 0) {
    fmt::print(human, "\ntime per step against iterations (N = {})\n", a.n);
    print_header(human);
    for (int k : {1, 2, 4, 8}) {
      const StageTiming t = time_stage(a, a.n, k);
      print_row(human, t);
      by_iterations.push_back(to_json(t));
    }
  }
  if (a.json) {
    nlohmann::ordered_json j = {{"suite", "collisions"}, {"device", a.device},
                                {"cpu", info.cpu_model}, {"threads", threads},
                                {"model", a.collisions}, {"restitution", a.restitution},
                                {"dim", a.dim},          {"volume_fraction", a.volume_fraction},
                                {"by_n", by_n},          {"by_iterations", by_iterations}};
    j["search"] = a.collision_search;
    fmt::print("{}\n", j.dump(2));
  }
}

SuiteResult collisions_suite(const BenchArgs& a) {
  SuiteResult r;
  r.suite = "collisions";
  r.title = "Collision stage time against N and iterations (seed 001 figs. 7.10, 7.16, 7.17)";
  r.meta = base_meta(a);
  r.meta["model"] = a.collisions;
  r.meta["restitution"] = a.restitution;
  r.meta["dim"] = a.dim;
  r.meta["search"] = a.collision_search;
  r.meta["volume_fraction"] = a.volume_fraction;
  r.meta["precision"] = "double";
  r.columns = {"sweep",    "device",    "n",          "iterations",
               "contacts", "detect_ms", "resolve_ms", "ms_per_step"};
  for (const std::string& d : bench_devices(a)) {
    BenchArgs b = a;
    b.device = d;
    b.seconds = a.quick ? 0.05 : 0.3;
    std::vector<std::size_t> sizes{1000, 10000};
    if (!a.quick) sizes.push_back(100000);
    if (!a.quick && d == "gpu") sizes.push_back(1000000);
    auto add = [&](const char* sweep, const StageTiming& t) {
      r.add_row({sweep, d, t.n, t.iterations, t.contacts, 1e3 * t.detect_seconds,
                 1e3 * t.resolve_seconds, 1e3 * t.step_seconds});
    };
    for (const std::size_t n : sizes) add("n", time_stage(b, n, 1));
    for (const int k : {1, 2, 4, 8}) add("iterations", time_stage(b, sizes.back(), k));
  }
  r.notes.push_back(fmt::format(
      "{} in a {}D uniform cloud, volume fraction {:g}; ms per step: the stage's median on a "
      "running cloud (on the GPU without the per-call copies).",
      a.collisions, a.dim, a.volume_fraction));
  r.plots.push_back({{"file", "collisions-n.png"},
                     {"kind", "line"},
                     {"x", "n"},
                     {"y", "ms_per_step"},
                     {"group", "device"},
                     {"filter", {{"sweep", "n"}}},
                     {"logx", true},
                     {"logy", true},
                     {"xlabel", "N (bodies)"},
                     {"ylabel", "ms per step"},
                     {"title", "Collision stage against N"}});
  r.plots.push_back({{"file", "collisions-iterations.png"},
                     {"kind", "line"},
                     {"x", "iterations"},
                     {"y", "ms_per_step"},
                     {"group", "device"},
                     {"filter", {{"sweep", "iterations"}}},
                     {"logx", true},
                     {"logy", false},
                     {"xlabel", "resolution passes per step"},
                     {"ylabel", "ms per step"},
                     {"title", "Collision stage against iterations"}});
  return r;
}

SuiteResult seeds_collisions_suite(const BenchArgs& a) {
  SuiteResult r;
  r.suite = "seeds-collisions";
  r.title =
      "Collision search: the grid against seed 001's quadtree/octree search, against N and the "
      "iterations (seed 001 figs. 7.10-7.17)";
  r.meta = base_meta(a);
  r.meta["model"] = a.collisions;
  r.meta["dim"] = a.dim;
  r.meta["volume_fraction"] = a.volume_fraction;
  r.columns = {"sweep",      "config",   "device",    "search",     "n",
               "iterations", "contacts", "detect_ms", "resolve_ms", "ms_per_step"};
  for (const std::string& d : bench_devices(a)) {
    for (const char* search : {"grid", "tree"}) {
      BenchArgs b = a;
      b.device = d;
      b.collision_search = search;
      b.seconds = a.quick ? 0.05 : 0.3;
      std::vector<std::size_t> sizes{1000, 10000};
      if (!a.quick) sizes.push_back(100000);
      if (!a.quick && d == "gpu") sizes.push_back(1000000);
      const std::string config = fmt::format("{} {}", d, search);
      auto add = [&](const char* sweep, const StageTiming& t) {
        r.add_row({sweep, config, d, search, t.n, t.iterations, t.contacts, 1e3 * t.detect_seconds,
                   1e3 * t.resolve_seconds, 1e3 * t.step_seconds});
      };
      for (const std::size_t n : sizes) add("n", time_stage(b, n, 1));
      for (const int k : {1, 2, 4, 8}) add("iterations", time_stage(b, sizes.back(), k));
    }
  }
  r.notes.push_back(fmt::format(
      "{} in a {}D uniform cloud, volume fraction {:g}, both searches from the same relaxed "
      "start; the searches find the same pairs (tests/unit/test_collision_tree.cpp), so the "
      "difference is the search's cost alone.",
      a.collisions, a.dim, a.volume_fraction));
  nlohmann::ordered_json by_n =
      report::plot("seeds-collisions-n.png", "line", "n", "detect_ms", "config",
                   "Collision search time against N, grid and quadtree (seed 001)", "N (bodies)",
                   "search ms per step", true, true);
  by_n["filter"] = {{"sweep", "n"}};
  r.plots.push_back(by_n);
  nlohmann::ordered_json by_k =
      report::plot("seeds-collisions-iterations.png", "line", "iterations", "ms_per_step", "config",
                   "Collision stage against the iterations, grid and quadtree",
                   "resolution passes per step", "ms per step", true, false);
  by_k["filter"] = {{"sweep", "iterations"}};
  r.plots.push_back(by_k);
  return r;
}

}  // namespace nbody::cli::bench
