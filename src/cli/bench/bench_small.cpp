// nbody bench small: the cost of a step where the forces cost little (bench_small.hpp).
// Each run steps a Plummer sphere (seed 42, softening 0.01, G = 1) with one integrator for
// doubling numbers of steps until the steps take --seconds / 4 (--quick: 0.05 s), after one
// untimed step; nbody in this process (its default threads: the run's rule), REBOUND in a
// Python process on the same bodies written to a file (its own clock around the steps).
#include "cli/bench/bench_small.hpp"

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "cli/bench/rebound_runner.hpp"
#include "core/omp_team.hpp"
#include "nbody/build_info.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/io.hpp"
#include "nbody/simulation.hpp"

namespace nbody::cli::bench {

namespace {

using json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

constexpr double kSoftening = 0.01;
constexpr double kDt = 1e-3;

struct Scheme {
  const char* label;
  IntegratorScheme scheme;
  TimestepMode mode;
  const char* rebound;  // REBOUND's integrator, or null: none comparable
};

constexpr Scheme kSchemes[] = {
    {"leapfrog", IntegratorScheme::Leapfrog, TimestepMode::Fixed, "leapfrog"},
    {"leapfrog-adaptive", IntegratorScheme::Leapfrog, TimestepMode::Adaptive, nullptr},
    {"ias15", IntegratorScheme::Ias15, TimestepMode::Fixed, "ias15"},
};

// REBOUND's side: the same bodies and settings, steps doubled until they take `seconds`.
constexpr const char* kReboundScript = R"(import sys, time, json
import rebound
path, integrator, seconds, dt, eps = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
rows = [[float(v) for v in l.split()[:7]] for l in open(path) if l.strip() and not l.startswith("#")]
def make():
    sim = rebound.Simulation()
    sim.G = 1.0
    sim.softening = eps
    for x, y, z, vx, vy, vz, m in rows:
        sim.add(m=m, x=x, y=y, z=z, vx=vx, vy=vy, vz=vz)
    sim.integrator = integrator
    sim.dt = dt
    return sim
steps = 1
while True:
    sim = make()
    sim.steps(1)
    done = sim.steps_done
    t0 = time.perf_counter()
    sim.steps(steps)
    took = time.perf_counter() - t0
    if took >= seconds or steps >= 1 << 24:
        print(json.dumps({"us_per_step": 1e6 * took / (sim.steps_done - done), "version": rebound.__version__}))
        break
    steps *= 2
)";

/// REBOUND's microseconds per step, or none (no Python or no REBOUND: `why` says).
std::optional<double> rebound_us(const ParticleSystem& ps, const char* integrator, double seconds,
                                 std::string& version, std::string& why) {
  if (integrator == nullptr) return std::nullopt;
  const auto j = run_rebound(kReboundScript, ps,
                             {integrator, fmt::format("{}", seconds), fmt::format("{}", kDt),
                              fmt::format("{}", kSoftening)},
                             why);
  if (!j) return std::nullopt;
  version = j->at("version").get<std::string>();
  return j->at("us_per_step").get<double>();
}

struct Timed {
  double us_per_step = 0;
  std::uint64_t steps = 0;
  int threads = 0;
};

Timed time_nbody(const ParticleSystem& ps, const Scheme& s, double seconds, int threads) {
  SimulationOptions o;
  o.gravity.algorithm = GravityAlgorithm::Direct;
  o.gravity.softening = kSoftening;
  o.gravity.precision = Precision::Double;
  o.gravity.threads = threads;
  o.integrator.scheme = s.scheme;
  o.integrator.timestep = s.mode;
  for (std::uint64_t steps = 1;; steps *= 2) {
    Simulation sim(ps, o);
    sim.step(kDt);  // the first evaluation, outside the clock
    const std::uint64_t before =
        s.scheme == IntegratorScheme::Ias15 ? sim.timestep_stats().steps : sim.steps_done();
    const auto start = Clock::now();
    for (std::uint64_t k = 0; k < steps; ++k) sim.step(kDt);
    const double took = std::chrono::duration<double>(Clock::now() - start).count();
    if (took >= seconds || steps >= (std::uint64_t(1) << 24)) {
      const std::uint64_t done =
          (s.scheme == IntegratorScheme::Ias15 ? sim.timestep_stats().steps : sim.steps_done()) -
          before;
      return {1e6 * took / double(done), done, sim.run_threads()};
    }
  }
}

}  // namespace

SuiteResult small_suite(const BenchArgs& a, std::FILE* progress) {
  const std::vector<std::size_t> ns = a.quick ? std::vector<std::size_t>{3, 100}
                                              : std::vector<std::size_t>{3, 10, 30, 100, 300, 1000};
  const double seconds = a.quick ? 0.05 : a.seconds / 4;
  SuiteResult r;
  r.suite = "small";
  r.title = "Few bodies: microseconds per step against N, nbody and REBOUND (issue #38)";
  r.meta = base_meta(a);
  r.columns = {"integrator",          "n",         "threads", "steps", "us_per_step",
               "rebound_us_per_step", "vs_rebound"};
  std::string version, why;
  for (const Scheme& s : kSchemes) {
    for (const std::size_t n : ns) {
      ModelOptions m;
      m.model = "plummer";
      m.n = n;
      m.seed = 42;
      const ParticleSystem ps = generate(m);
      const Timed t = time_nbody(ps, s, seconds, a.threads);
      const std::optional<double> reb = rebound_us(ps, s.rebound, seconds, version, why);
      const int threads = team_size(t.threads);
      fmt::print(progress, "small: {:<18} N = {:>5}  {:>9.3f} us/step ({} thread{}){}\n", s.label,
                 n, t.us_per_step, threads, threads == 1 ? "" : "s",
                 reb ? fmt::format(", REBOUND {:.3f} us/step", *reb) : std::string());
      std::fflush(progress);
      r.add_row({s.label, n, threads, t.steps, t.us_per_step, reb ? json(*reb) : json(nullptr),
                 reb ? json(t.us_per_step / *reb) : json(nullptr)});
    }
  }
  const BuildInfo info = build_info();
  r.meta["ns"] = ns;
  r.meta["rebound"] = version.empty() ? json(nullptr) : json(version);
  r.meta["command"] = fmt::format("nbody bench small{}", a.quick ? " --quick" : "");
  r.notes.push_back(fmt::format(
      "Plummer spheres (seed 42), softening {:g}, G = 1, float64 direct sum, dt = {:g} "
      "(IAS15: its own steps from that first one, epsilon 1e-9, counted as its accepted "
      "steps); each figure is the steps after a first untimed one, doubled until they take "
      "{:g} s; nbody's threads are its default (--threads {}: 0 lets the run choose).",
      kSoftening, kDt, seconds, a.threads));
  r.notes.push_back(version.empty()
                        ? "REBOUND: " + why
                        : fmt::format("REBOUND {} in {}, on the same bodies, its clock around "
                                      "sim.steps(k); leapfrog-adaptive has no REBOUND counterpart.",
                                      version, python_command()));
  r.notes.push_back(fmt::format("Machine: nbody {}, {}, {} OpenMP threads, CPU {}.", info.version,
                                info.compiler, info.max_threads, info.cpu_model));
  r.plots.push_back({{"file", "small.png"},
                     {"kind", "line"},
                     {"x", "n"},
                     {"y", json::array({"us_per_step", "rebound_us_per_step"})},
                     {"group", "integrator"},
                     {"logx", true},
                     {"logy", true},
                     {"xlabel", "N"},
                     {"ylabel", "µs per step"},
                     {"title", "Few bodies: µs per step, nbody and REBOUND"}});
  return r;
}

}  // namespace nbody::cli::bench
