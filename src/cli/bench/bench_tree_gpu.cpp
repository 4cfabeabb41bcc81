// nbody bench tree --device gpu: the GPU tree resident in a simulation (build, summarise,
// sort, force and leapfrog integration all on the device), on Plummer spheres in Hénon
// units with softening 0.05: median milliseconds per full step, the per-stage breakdown,
// interactions per body, and the force error reached (against the float64 direct sum on a
// sample of bodies), for each N. --tree-build insertion times the seeds' build with locks
// (stages "build" = insertion, "sort" = layout); --walk-order input walks the bodies in
// input order (the seeds' run without their sort kernel).
#include <algorithm>
#include <chrono>
#include <memory>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/bench/bench_common.hpp"
#include "nbody/build_info.hpp"
#include "nbody/force_error.hpp"
#include "nbody/gravity.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/input_error.hpp"
#include "nbody/simulation.hpp"

namespace nbody::cli::bench {

namespace {

/// The reference case: Plummer, Hénon units, eps = 0.05 (unless --softening).
constexpr double kGpuTreeSoftening = 0.05;
constexpr double kStepDt = 1e-3;

/// Bodies compared with the direct sum: the float64 reference costs K x N on the host.
std::size_t accuracy_sample(std::size_t n) {
  return n > 20'000'000 ? 200 : 1000;
}

}  // namespace

void bench_tree_gpu(const BenchArgs& a, const std::vector<std::size_t>& sizes) {
  std::FILE* human = a.json ? stderr : stdout;
  GravityOptions g;
  g.algorithm = GravityAlgorithm::Tree;
  g.device = Device::Gpu;
  g.theta = a.theta;
  g.quadrupole = a.quadrupole;
  g.mac = parse_opening_criterion(a.mac);
  g.alpha = a.alpha;
  g.precision = a.precision == "double" ? Precision::Double : Precision::Float;
  g.softening = softening_or(a, kGpuTreeSoftening);
  g.tree_build = parse_tree_build(a.tree_build);
  g.tree_input_order_walk = a.walk_order == "input";
  if (g.tree_input_order_walk && g.mac == OpeningCriterion::Relative) {
    throw input_error("--walk-order", "input takes --mac geometric or bmax",
                      "input, --mac relative");
  }
  (void)make_gravity_solver(g);  // fails fast without a GPU
  const std::vector<GpuDevice> devices = gpu_devices();
  const std::string gpu = devices.empty() ? "?" : devices.front().name;
  fmt::print(human,
             "GPU tree, Plummer (Henon units), precision {}, {}, {}, softening = {:g}, build {}, "
             "walk in {} order, GPU: {}\n",
             to_string(g.precision), criterion_label(g), a.quadrupole ? "quadrupole" : "monopole",
             g.softening, a.tree_build, a.walk_order, gpu);
  std::fflush(human);

  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  std::vector<std::string> lines;
  for (const std::size_t n : sizes) {
    ModelOptions model;
    model.n = n;
    model.seed = 42;
    const ParticleSystem bodies = generate(model);

    // Steps: one warm-up (allocations), then for about a.seconds (3 to 50 steps).
    using Clock = std::chrono::steady_clock;
    std::vector<double> step_seconds;
    PhaseTimes stages;
    {
      IntegratorOptions integ;
      integ.scheme = IntegratorScheme::Leapfrog;
      Simulation sim(bodies, g, integ);
      sim.step(kStepDt);
      sim.gravity_stages() = PhaseTimes{};
      const auto start = Clock::now();
      while (step_seconds.size() < 3 ||
             (std::chrono::duration<double>(Clock::now() - start).count() < a.seconds &&
              step_seconds.size() < 50)) {
        const auto t0 = Clock::now();
        sim.step(kStepDt);
        step_seconds.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
      }
      stages = sim.gravity_stages();
    }
    const double step = median_of(step_seconds);
    const double steps = double(step_seconds.size());

    // Accuracy and interactions: one evaluation of the per-call solver on the same bodies.
    auto solver = make_gravity_solver(g);
    ParticleSystem approx = bodies;
    solver->compute_accelerations(approx);
    // The relative criterion's first evaluation opens by theta; its second by |a_old|, as
    // every step of the simulation above after its first.
    if (g.mac == OpeningCriterion::Relative) solver->compute_accelerations(approx);
    const double per_body = solver->stats().interactions_per_body;
    const std::vector<std::size_t> sample = sample_indices(n, accuracy_sample(n), 1);
    ParticleSystem exact = bodies;
    direct_accelerations_for(bodies, sample, 1.0, g.softening, exact);
    const ForceErrorStats err = summarize_errors(relative_force_errors(approx, exact, sample));

    fmt::print(human,
               "\nN = {}: {:.3f} ms per step (median of {} steps), {:.0f} interactions/body, "
               "force error median {:.3e}, p99 {:.3e} ({} bodies sampled)\n",
               n, 1e3 * step, step_seconds.size(), per_body, err.median, err.p99, sample.size());
    fmt::print(human, "  {:<12} {:>10} {:>7}\n", "stage", "ms/step", "share");
    nlohmann::ordered_json stage_json = nlohmann::ordered_json::object();
    double staged = 0;
    for (const auto& [name, seconds] : stages.entries()) {
      const double ms = 1e3 * seconds / steps;
      staged += ms;
      fmt::print(human, "  {:<12} {:>10.3f} {:>6.1f}%\n", name, ms, 100.0 * ms / (1e3 * step));
      stage_json[name] = ms;
    }
    const double rest = std::max(0.0, 1e3 * step - staged);
    fmt::print(human, "  {:<12} {:>10.3f} {:>6.1f}%\n", "integrate+", rest,
               100.0 * rest / (1e3 * step));
    std::fflush(human);
    lines.push_back(fmt::format("{:>11} {:>10.3f} {:>12.0f} {:>11.3e} {:>11.3e}", n, 1e3 * step,
                                per_body, err.median, err.p99));
    rows.push_back({{"n", n},
                    {"ms_per_step", 1e3 * step},
                    {"steps", step_seconds.size()},
                    {"stages_ms", stage_json},
                    {"other_ms", rest},
                    {"interactions_per_body", per_body},
                    {"error_median", err.median},
                    {"error_p99", err.p99},
                    {"error_sample", sample.size()}});
  }
  fmt::print(human, "\n{:>11} {:>10} {:>12} {:>11} {:>11}\n", "N", "ms/step", "inter/body",
             "err median", "err p99");
  for (const auto& l : lines) fmt::print(human, "{}\n", l);
  if (a.json) {
    const nlohmann::ordered_json j = {{"suite", "tree"},
                                      {"device", "gpu"},
                                      {"gpu", gpu},
                                      {"precision", to_string(g.precision)},
                                      {"theta", a.theta},
                                      {"mac", a.mac},
                                      {"alpha", a.alpha},
                                      {"quadrupole", a.quadrupole},
                                      {"tree_build", a.tree_build},
                                      {"walk_order", a.walk_order},
                                      {"softening", g.softening},
                                      {"results", rows}};
    fmt::print("{}\n", j.dump(2));
  }
}

}  // namespace nbody::cli::bench
