// nbody bench theta: the console command (table, JSON, the plot through bench/tree_pareto.py)
// and the report suite theta-pareto (theta_sweep.hpp).
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/bench/report_suite_helpers.hpp"
#include "cli/bench/theta_sweep.hpp"
#include "nbody/input_error.hpp"
#include "nbody/io.hpp"

namespace nbody::cli::bench {

namespace {

using json = nlohmann::ordered_json;

/// The command line that measures the same points.
std::string command_of(const ThetaSweep& s, const BenchArgs& a) {
  std::vector<std::string> criteria, orders;
  for (const OpeningCriterion c : s.criteria) criteria.emplace_back(to_string(c));
  for (const bool q : s.orders) orders.emplace_back(q ? "quadrupole" : "monopole");
  std::string c = fmt::format(
      "nbody bench theta --device {} --model {} -n {} --seed {} --softening {:g} --precision {} "
      "--sample {} --criteria {} --orders {}",
      s.device, s.model, s.n, s.seed, s.gravity.softening, to_string(s.gravity.precision), s.sample,
      fmt::join(criteria, ","), fmt::join(orders, ","));
  if (!s.thetas.empty()) c += fmt::format(" --thetas {}", fmt::join(s.thetas, ","));
  if (!s.alphas.empty()) c += fmt::format(" --alphas {}", fmt::join(s.alphas, ","));
  if (a.threads > 0) c += fmt::format(" --threads {}", a.threads);
  return c + fmt::format(" --seconds {:g}", s.timing.budget_seconds);
}

json point_json(const SweepPoint& p) {
  const bool relative = p.mac == OpeningCriterion::Relative;
  const ForceErrorStats& e = p.measured.errors;
  return {{"series", p.series()},
          {"mac", to_string(p.mac)},
          {"quadrupole", p.quadrupole},
          {"theta", relative ? json(nullptr) : json(p.value)},
          {"alpha", relative ? json(p.value) : json(nullptr)},
          {"label", p.label()},
          {"median", e.median},
          {"p90", e.p90},
          {"p99", e.p99},
          {"p999", e.p999},
          {"max", e.max},
          {"rms", e.rms},
          {"ms", p.ms()},
          {"wall_ms", 1e3 * p.measured.best_seconds},
          {"build_ms", 1e3 * p.measured.best_build_seconds},
          {"walk_ms", 1e3 * p.measured.best_walk_seconds},
          {"interactions_per_body", p.measured.stats.interactions_per_body},
          {"evaluations", p.measured.evaluations},
          {"front_median", p.front_median},
          {"front_p99", p.front_p99}};
}

json sweep_json(const ThetaSweep& s, const SweepResult& r, const BenchArgs& a) {
  json j = {{"suite", "theta"}, {"command", command_of(s, a)}};
  const json meta = base_meta(a);
  for (const auto& [key, value] : meta.items()) j[key] = value;
  j["device"] = s.device;
  j["threads"] = a.threads > 0 ? a.threads : build_info().max_threads;
  for (const auto& [key, value] :
       {std::pair<const char*, json>{"model", s.model},
        {"n", r.n},
        {"seed", s.seed},
        {"softening", s.gravity.softening},
        {"G", s.gravity.G},
        {"precision", to_string(s.gravity.precision)},
        {"sample", r.sampled},
        {"sample_seed", s.sample_seed},
        {"reference_seconds", r.reference_seconds},
        {"relative_first_theta", s.gravity.theta},
        {"time",
         "ms: the tree's build + walk stages of the fastest timed evaluation (after one "
         "warm-up evaluation); wall_ms: the fastest whole call"}})
    j[key] = value;
  j["points"] = json::array();
  for (const SweepPoint& p : r.points) j["points"].push_back(point_json(p));
  j["references"] = json::array();
  if (s.device == "gpu") {
    for (const PublishedPoint& e : kEclBh) {
      j["references"].push_back({{"label", e.label},
                                 {"median", e.median},
                                 {"p99", e.p99},
                                 {"ms", e.ms},
                                 {"source", kEclBhSource}});
    }
  }
  return j;
}

std::string front_text(const SweepPoint& p) {
  return p.front_median && p.front_p99 ? "median, p99"
         : p.front_median              ? "median"
         : p.front_p99                 ? "p99"
                                       : "-";
}

void print_table(std::FILE* out, const ThetaSweep& s, const SweepResult& r) {
  fmt::print(out, "\nbench theta: {} N = {}, device {}, precision {}, softening {:g}\n", s.model,
             r.n, s.device, to_string(s.gravity.precision), s.gravity.softening);
  fmt::print(out,
             "errors: relative to the float64 direct sum on {} sampled bodies; ms: build + walk "
             "of the fastest timed evaluation\n",
             r.sampled);
  fmt::print(out, "{:<22} {:<14} {:>10} {:>10} {:>10} {:>10} {:>11} {:>5}  {}\n", "series", "knob",
             "median", "p99", "ms", "wall ms", "inter/body", "evals", "front");
  for (const SweepPoint& p : r.points) {
    fmt::print(out, "{:<22} {:<14} {:>10.3e} {:>10.3e} {:>10.4g} {:>10.4g} {:>11.1f} {:>5}  {}\n",
               p.series(), p.label(), p.measured.errors.median, p.measured.errors.p99, p.ms(),
               1e3 * p.measured.best_seconds, p.measured.stats.interactions_per_body,
               p.measured.evaluations, front_text(p));
  }
  if (s.device == "gpu") {
    for (const PublishedPoint& e : kEclBh) {
      fmt::print(out, "{:<37} {:>10.3e} {:>10.3e} {:>10.4g}\n", e.label, e.median, e.p99, e.ms);
    }
    fmt::print(out, "({})\n", kEclBhSource);
  }
  std::fflush(out);
}

/// Draws the JSON at `json_path` into `png` with bench/tree_pareto.py.
void plot(const std::filesystem::path& json_path, const std::string& png) {
  const std::string script = source_script("NBODY_PARETO_SCRIPT", "bench/tree_pareto.py");
  const std::string why =
      run_python_script(script, {"--from-json", json_path.string(), "--out", png});
  if (!why.empty()) throw input_error("--plot", why + " (no plot drawn)", png);
}

}  // namespace

void bench_theta(const BenchArgs& a, const ThetaBenchArgs& t, bool n_given) {
  if (a.device == "all")
    throw input_error("--device", "bench theta without -o runs on one device (cpu or gpu)", "all");
  if (!t.plot.empty() && std::filesystem::path(t.plot).extension() != ".png")
    throw input_error("--plot", "must name a .png file", t.plot);
  const ThetaSweep s = resolve_theta_sweep(a, t, a.device, n_given, false);
  (void)bench_devices(a);  // --device gpu without a usable GPU: say so now
  const bool json_stdout = a.json && a.json_file.empty();
  std::FILE* human = json_stdout ? stderr : stdout;
  const SweepResult r = run_theta_sweep(s, stderr);
  print_table(human, s, r);
  const json j = sweep_json(s, r, a);
  std::filesystem::path json_path = a.json_file;
  if (!a.json_file.empty()) {
    write_file_atomically(json_path, [&](std::ostream& out) { out << j.dump(2) << "\n"; });
    fmt::print(human, "wrote {}\n", a.json_file);
  } else if (json_stdout) {
    fmt::print("{}\n", j.dump(2));
    std::fflush(stdout);
  }
  if (t.plot.empty()) return;
  const bool temporary = json_path.empty();
  if (temporary) {  // the plot's input beside the plot, removed once drawn
    const std::filesystem::path png(t.plot);
    json_path = png.parent_path() / ("." + png.filename().string() + ".json.tmp");
    write_file_atomically(json_path, [&](std::ostream& out) { out << j.dump(2) << "\n"; });
  }
  try {
    plot(json_path, t.plot);
  } catch (...) {
    std::error_code ec;
    if (temporary) std::filesystem::remove(json_path, ec);
    throw;
  }
  std::error_code ec;
  if (temporary) std::filesystem::remove(json_path, ec);
  fmt::print(human, "wrote {}\n", t.plot);
}

SuiteResult theta_pareto_suite(const BenchArgs& a, const ThetaBenchArgs& t) {
  SuiteResult r;
  r.suite = "theta-pareto";
  r.title = "Force error against time per evaluation, every opening criterion and order (#22)";
  r.meta = base_meta(a);
  r.columns = {"device",       "n",
               "softening",    "series",
               "criterion",    "order",
               "knob",         "value",
               "label",        "error_median",
               "error_p99",    "ms_per_eval",
               "wall_ms",      "interactions_per_body",
               "front_median", "front_p99"};
  std::vector<std::string> commands;
  for (const std::string& d : bench_devices(a)) {
    ThetaSweep s = resolve_theta_sweep(a, t, d, false, true);
    s.timing.budget_seconds = report::budget(a).per_config;
    const SweepResult res = run_theta_sweep(s, stderr);
    r.meta["precision"] = to_string(s.gravity.precision);
    commands.push_back(command_of(s, a));
    for (const SweepPoint& p : res.points) {
      r.add_row({d, res.n, s.gravity.softening, p.series(), to_string(p.mac),
                 p.quadrupole ? "quadrupole" : "monopole", p.knob(), p.value, p.label(),
                 p.measured.errors.median, p.measured.errors.p99, p.ms(),
                 1e3 * p.measured.best_seconds, p.measured.stats.interactions_per_body,
                 p.front_median, p.front_p99});
    }
    if (d == "gpu") {
      for (const PublishedPoint& e : kEclBh) {
        r.add_row({d, 1048576, 0.05, "ECL-BH 4.5 (published)", nullptr, nullptr, nullptr, nullptr,
                   e.label, e.median, e.p99, e.ms, nullptr, nullptr, nullptr, nullptr});
      }
      r.notes.push_back(fmt::format("The ECL-BH rows are not measured here: {}.", kEclBhSource));
    }
    r.plots.push_back(
        report::plot(fmt::format("theta-pareto-{}.png", d), "line", "ms_per_eval",
                     json::array({"error_median", "error_p99"}), "series",
                     fmt::format("{}: median (solid) and p99 (dashed) force error against time", d),
                     "ms per evaluation (build + walk)", "relative force error", true, true));
    r.plots.back()["filter"] = {{"device", d}};
  }
  r.notes.push_back(
      "Errors against the float64 direct sum on a sample of bodies (computed once per device); "
      "ms_per_eval: the tree's build + walk of the fastest of 3 or more evaluations after a "
      "warm-up (the relative criterion's warm-up opens by theta 0.5 and gives the |a_old| of "
      "the measured evaluation); front_median, front_p99: not dominated within the series in "
      "(time, error). `nbody bench theta --plot FILE.png` draws the fronts.");
  for (const std::string& c : commands) r.notes.push_back(fmt::format("Command: `{}`", c));
  return r;
}

}  // namespace nbody::cli::bench
