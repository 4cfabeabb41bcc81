// `nbody bench seeds`: the seed documents' tree experiments redrawn from nbody's own runs
// (docs/seed-documents.md links each figure to this suite):
//   seed 003 figs. 7-8    each kernel's share of the step against N, with the sort (the walk
//                         over bodies in tree order) and without it (input order)
//   seed 003 figs. 9-10   each kernel's time relative to its time at the smallest N
//   seed 003 fig. 11      the force kernel's time against N with and without the sort
//   seed 000 table 3.2    each kernel's time at 150,000 bodies
// for the seeds' own build (insertion under locks, --tree-build insertion) and nbody's
// (Morton keys), so the two pipelines stand side by side. The seeds' criterion: geometric,
// theta 0.5, float. The collision-search comparison (seed 001 figs. 7.10-7.17) is the suite
// seeds-collisions (bench_collisions.cpp).
#include "cli/bench/report_suite_helpers.hpp"

namespace nbody::cli::bench {

using namespace report;  // NOLINT: the suites' shared helpers

namespace {

struct SeedConfig {
  std::string device;
  TreeBuild build;
  bool input_order;  // the walk over bodies in input order: the seeds' "without kernel 4"
  [[nodiscard]] std::string label() const {
    return fmt::format("{} {} {}", device, to_string(build), input_order ? "unsorted" : "sorted");
  }
};

std::vector<std::size_t> seed_sizes(const BenchArgs& a, const std::string& device) {
  if (a.quick) return {500, 2000, 10000};
  std::vector<std::size_t> sizes{500, 1000, 5000, 10000, 50000, 150000};
  if (device == "gpu") sizes.insert(sizes.end(), {500000, 1000000});
  return sizes;
}

/// Milliseconds per step of each stage of the tree's step (the solver's own stages, then
/// what the step spends around them, then the integration), over a few steps.
std::vector<std::pair<std::string, double>> stage_ms(const ParticleSystem& ps,
                                                     const GravityOptions& g, double per_config) {
  Simulation sim(ps, g, IntegratorOptions{});
  const std::uint64_t steps = timed_steps(sim, per_config, 50);
  std::vector<std::pair<std::string, double>> out;
  double staged = 0;
  for (const auto& [stage, seconds] : sim.gravity_stages().entries()) {
    out.emplace_back(stage, 1e3 * seconds / double(steps));
    staged += seconds;
  }
  const double other = sim.times().get("gravity") - staged;
  if (other > 0) out.emplace_back("gravity other", 1e3 * other / double(steps));
  out.emplace_back("integrate", 1e3 * sim.times().get("integrate") / double(steps));
  return out;
}

}  // namespace

SuiteResult seeds_suite(const BenchArgs& a) {
  const Budget b = budget(a);
  SuiteResult r;
  r.suite = "seeds";
  r.title =
      "The seeds' tree pipeline: time per kernel against N, insertion and Morton builds, with "
      "and without the sort (seed 003 figs. 7-11, seed 000 table 3.2)";
  r.meta = base_meta(a);
  r.meta["model"] = "plummer";
  r.meta["precision"] = "float";
  r.meta["mac"] = "geometric";
  r.meta["theta"] = 0.5;
  r.meta["softening"] = softening_or(a, kSoftening);
  r.columns = {"config",      "device", "build",
               "order",       "n",      "stage",
               "ms_per_step", "share",  "relative_to_smallest_n"};
  std::vector<SeedConfig> configs;
  for (const std::string& d : bench_devices(a)) {
    for (const TreeBuild build : {TreeBuild::Insertion, TreeBuild::Morton}) {
      configs.push_back({d, build, false});
      if (d == "gpu") configs.push_back({d, build, true});  // the walk order is the GPU's
    }
  }
  for (const SeedConfig& c : configs) {
    std::map<std::string, double> smallest;  // each stage's ms at the smallest N
    for (const std::size_t n : seed_sizes(a, c.device)) {
      GravityOptions g = solver_options(a, c.device, GravityAlgorithm::Tree);
      g.mac = OpeningCriterion::Geometric;
      g.tree_build = c.build;
      g.tree_input_order_walk = c.input_order;
      const auto stages = stage_ms(plummer(n), g, b.per_config);
      double step = 0;
      for (const auto& s : stages) step += s.second;
      for (const auto& [stage, ms] : stages) {
        if (!smallest.count(stage)) smallest[stage] = ms;
        const double base = smallest[stage];
        r.add_row({c.label(), c.device, to_string(c.build), c.input_order ? "input" : "tree", n,
                   stage, ms, step > 0 ? ms / step : 0.0, base > 0 ? ms / base : 0.0});
      }
    }
  }
  r.notes.push_back(
      "Plummer sphere, float, geometric theta 0.5 (the seeds' criterion); 'sorted': the walk "
      "over the bodies in tree order (today's), 'unsorted': in their input order (the seeds' "
      "run without the sort kernel, GPU only). GPU stages are CUDA-event times; "
      "'gravity other' is what the step spends around them. Table 3.2 of seed 000: the rows "
      "at n = 150000.");
  for (const SeedConfig& c : configs) {
    const std::string tag = fmt::format("{}-{}-{}", c.device, to_string(c.build),
                                        c.input_order ? "unsorted" : "sorted");
    json share = plot("seeds-share-" + tag + ".png", "stacked_bar", "n", "share", "stage",
                      "Share of the step per kernel, " + c.label() + " (seed 003 figs. 7-8)",
                      "N (bodies)", "share of the step");
    share["filter"] = {{"config", c.label()}};
    r.plots.push_back(share);
    json relative =
        plot("seeds-relative-" + tag + ".png", "line", "n", "relative_to_smallest_n", "stage",
             "Kernel time relative to the smallest N, " + c.label() + " (seed 003 figs. 9-10)",
             "N (bodies)", "time / time at the smallest N", true, true);
    relative["filter"] = {{"config", c.label()}};
    r.plots.push_back(relative);
  }
  json force = plot("seeds-force-sort.png", "line", "n", "ms_per_step", "config",
                    "The force kernel with and without the sort (seed 003 fig. 11)", "N (bodies)",
                    "ms per step", true, true);
  force["filter"] = {{"stage", json::array({"force", "walk"})}};
  r.plots.push_back(force);
  return r;
}

}  // namespace nbody::cli::bench
