// nbody bench test-particles (bench_test_particles.hpp). The giants model: the Sun and the
// four giant planets on circular orbits (G = 1, solar masses, au: a year is 2 pi) and N
// massless test particles on circular orbits between 1 and 40 au in a thin disc; the leapfrog with
// dt = 0.01, the float64 direct sum without softening (the force work: N x 5). Each device's steps
// are doubled until they take --seconds / 2 (--quick: 0.1 s) after one untimed step; REBOUND
// (N_active = 5, testparticle_type 0, its leapfrog) steps the same bodies in a Python
// process, its own clock around sim.steps(k). The planets of the timed run are compared
// with a run of the five alone, bit for bit.
#include "cli/bench/bench_test_particles.hpp"

#include <chrono>
#include <cmath>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "cli/bench/rebound_runner.hpp"
#include "core/omp_team.hpp"
#include "nbody/build_info.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/simulation.hpp"

namespace nbody::cli::bench {

namespace {

using json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

constexpr double kDt = 0.01;
constexpr std::size_t kPlanets = 5;  // the Sun and four giants: REBOUND's N_active

constexpr const char* kReboundScript = R"(import sys, time, json
import rebound
path, seconds, dt = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
rows = [[float(v) for v in l.split()[:7]] for l in open(path) if l.strip() and not l.startswith("#")]
def make():
    sim = rebound.Simulation()
    sim.G = 1.0
    for x, y, z, vx, vy, vz, m in rows:
        sim.add(m=m, x=x, y=y, z=z, vx=vx, vy=vy, vz=vz)
    sim.N_active = 5
    sim.testparticle_type = 0
    sim.integrator = "leapfrog"
    sim.dt = dt
    return sim
sim = make()
sim.steps(1)
steps = 1
while True:
    done = sim.steps_done
    t0 = time.perf_counter()
    sim.steps(steps)
    took = time.perf_counter() - t0
    if took >= seconds or steps >= 1 << 20:
        print(json.dumps({"us_per_step": 1e6 * took / (sim.steps_done - done), "version": rebound.__version__}))
        break
    steps *= 2
)";

/// The Sun, Jupiter, Saturn, Uranus and Neptune, then `tests` massless test particles
/// (the giants model).
ParticleSystem giants_and_dust(std::size_t tests) {
  ModelOptions m;
  m.model = "giants";
  m.n = kPlanets + tests;
  m.seed = 42;
  return generate(m);
}

SimulationOptions options_on(Device device, int threads) {
  SimulationOptions o;
  o.gravity.algorithm = GravityAlgorithm::Direct;
  o.gravity.device = device;
  o.gravity.precision = Precision::Double;
  o.gravity.threads = threads;
  return o;
}

struct Timed {
  double us_per_step = 0;
  std::uint64_t steps = 0;
  int threads = 0;
  bool planets_identical = false;
};

Timed time_nbody(const ParticleSystem& start, Device device, double seconds, int threads) {
  const SimulationOptions o = options_on(device, threads);
  Simulation sim(start, o);
  sim.step(kDt);  // the first evaluation, outside the clock
  std::uint64_t total = 1;
  for (std::uint64_t steps = 1;; steps *= 2) {
    const auto t0 = Clock::now();
    for (std::uint64_t k = 0; k < steps; ++k) sim.step(kDt);
    const double took = std::chrono::duration<double>(Clock::now() - t0).count();
    total += steps;
    if (took >= seconds || steps >= (std::uint64_t(1) << 20)) {
      Timed t{1e6 * took / double(steps), steps, sim.run_threads(), true};
      // The planets alone on the same device, as many steps: the same bits.
      Simulation alone(giants_and_dust(0), options_on(device, 1));
      for (std::uint64_t k = 0; k < total; ++k) alone.step(kDt);
      for (std::size_t i = 0; i < kPlanets; ++i) {
        const ParticleSystem& a = sim.particles();
        const ParticleSystem& b = alone.particles();
        t.planets_identical = t.planets_identical && a.x[i] == b.x[i] && a.y[i] == b.y[i] &&
                              a.z[i] == b.z[i] && a.vx[i] == b.vx[i] && a.vy[i] == b.vy[i];
      }
      return t;
    }
  }
}

}  // namespace

SuiteResult test_particles_suite(const BenchArgs& a, bool count_given, std::FILE* progress) {
  const std::size_t n = count_given ? a.n : a.quick ? 20000 : 1000000;
  const double seconds = a.quick ? 0.1 : a.seconds / 2;
  std::vector<Device> devices;
  if (a.device != "gpu") devices.push_back(Device::Cpu);
  if (a.device == "gpu" || (a.device == "all" && !gpu_devices().empty()))
    devices.push_back(Device::Gpu);
  SuiteResult r;
  r.suite = "test-particles";
  r.title = "Test particles: microseconds per step, nbody and REBOUND's N_active (issue #38)";
  r.meta = base_meta(a);
  r.columns = {"device",     "n_test",           "steps",
               "threads",    "us_per_step",      "rebound_us_per_step",
               "vs_rebound", "planets_identical"};
  fmt::print(progress, "test-particles: the Sun, 4 giants and {} test particles\n", n);
  std::fflush(progress);
  const ParticleSystem start = giants_and_dust(n);
  std::string why;
  const std::optional<json> reb =
      run_rebound(kReboundScript, start, {fmt::format("{}", seconds), fmt::format("{}", kDt)}, why);
  const double reb_us = reb ? reb->at("us_per_step").get<double>() : 0.0;
  for (const Device device : devices) {
    const Timed t = time_nbody(start, device, seconds, a.threads);
    const int threads = device == Device::Cpu ? team_size(t.threads) : 0;
    fmt::print(progress, "test-particles: {} {:>10.1f} us/step{}{}\n", to_string(device),
               t.us_per_step, reb ? fmt::format(", REBOUND {:.1f} us/step", reb_us) : "",
               t.planets_identical ? ", planets as without the test particles" : "");
    std::fflush(progress);
    r.add_row({std::string(to_string(device)), n, t.steps, threads, t.us_per_step,
               reb ? json(reb_us) : json(nullptr),
               reb ? json(t.us_per_step / reb_us) : json(nullptr), t.planets_identical});
  }
  const BuildInfo info = build_info();
  r.meta["n_test"] = n;
  r.meta["rebound"] = reb ? json(reb->at("version")) : json(nullptr);
  r.meta["command"] = fmt::format("nbody bench test-particles{}{}", a.quick ? " --quick" : "",
                                  count_given ? fmt::format(" -n {}", n) : "");
  r.notes.push_back(fmt::format(
      "The Sun and the four giant planets (circular orbits, G = 1, au) and {} massless test "
      "particles between 1 and 40 au; leapfrog, dt = {:g}, float64 direct sum, no softening; "
      "the steps after a first untimed one, doubled until they take {:g} s. "
      "planets_identical: the five bodies' positions and velocities equal, bit for bit, those "
      "of a run of the five alone.",
      n, kDt, seconds));
  r.notes.push_back(reb ? fmt::format("REBOUND {} in {} (N_active = 5, testparticle_type 0, its "
                                      "leapfrog; one thread), the same bodies.",
                                      reb->at("version").get<std::string>(), python_command())
                        : "REBOUND: " + why);
  r.notes.push_back(fmt::format("Machine: nbody {}, {}, {} OpenMP threads, CPU {}.", info.version,
                                info.compiler, info.max_threads, info.cpu_model));
  return r;
}

}  // namespace nbody::cli::bench
