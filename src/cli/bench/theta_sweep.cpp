// nbody bench theta: the sweep itself (options resolved, the reference computed once, every
// criterion, order and theta or alpha measured, the Pareto fronts marked).
#include "cli/bench/theta_sweep.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "nbody/error.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/input_error.hpp"

namespace nbody::cli::bench {

namespace {

constexpr std::size_t kCpuN = 100000, kGpuN = 1048576, kQuickN = 5000;
constexpr std::size_t kCpuSample = 2000, kGpuSample = 4096, kQuickSample = 200;
constexpr double kCpuSoftening = 0.01, kGpuSoftening = 0.05;
constexpr std::size_t kMinEvaluations = 3, kMaxEvaluations = 20;

/// A list of positive, finite numbers given as text ("0.3,0.4" split by CLI11).
std::vector<double> positive_numbers(const std::vector<std::string>& given, const char* option,
                                     const char* zero_means) {
  if (std::all_of(given.begin(), given.end(), [](const std::string& s) { return s.empty(); }))
    throw Error(fmt::format("{}: the list is empty (give values such as 0.3,0.5)", option));
  std::vector<double> values;
  for (const std::string& text : given) {
    errno = 0;
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE)
      throw input_error(option, "not a number", text);
    if (!(v > 0) || !std::isfinite(v))
      throw input_error(option, fmt::format("must be a finite number > 0{}", zero_means), text);
    if (std::find(values.begin(), values.end(), v) == values.end()) values.push_back(v);
  }
  return values;
}

std::vector<OpeningCriterion> parse_criteria(const std::vector<std::string>& given) {
  constexpr OpeningCriterion all[] = {OpeningCriterion::Geometric, OpeningCriterion::Bmax,
                                      OpeningCriterion::Relative};
  std::vector<OpeningCriterion> out;
  for (const std::string& name : given) {
    if (name.empty()) continue;
    const auto* c = std::find_if(std::begin(all), std::end(all),
                                 [&](OpeningCriterion x) { return to_string(x) == name; });
    if (c == std::end(all))
      throw input_error("--criteria",
                        "unknown opening criterion (available: geometric, bmax, relative)", name);
    if (std::find(out.begin(), out.end(), *c) == out.end()) out.push_back(*c);
  }
  if (out.empty()) throw Error("--criteria: the list is empty (geometric, bmax, relative)");
  return out;
}

std::vector<bool> parse_orders(const std::vector<std::string>& given) {
  std::vector<bool> out;
  for (const std::string& name : given) {
    if (name.empty()) continue;
    if (name != "monopole" && name != "quadrupole")
      throw input_error("--orders", "unknown order (available: monopole, quadrupole)", name);
    if (std::find(out.begin(), out.end(), name == "quadrupole") == out.end())
      out.push_back(name == "quadrupole");
  }
  if (out.empty()) throw Error("--orders: the list is empty (monopole, quadrupole)");
  return out;
}

}  // namespace

ThetaSweep resolve_theta_sweep(const BenchArgs& a, const ThetaBenchArgs& t,
                               const std::string& device, bool n_given, bool report) {
  const bool gpu = device == "gpu";
  ThetaSweep s;
  s.device = device;
  s.quick = a.quick;
  s.model = t.model.empty() ? "plummer" : t.model;
  s.n = n_given ? a.n : a.quick ? kQuickN : gpu ? kGpuN : kCpuN;
  s.seed = t.seed.value_or(42);
  s.sample = t.sample.value_or(a.quick ? kQuickSample : gpu ? kGpuSample : kCpuSample);
  s.gravity.algorithm = GravityAlgorithm::Tree;
  s.gravity.device = gpu ? Device::Gpu : Device::Cpu;
  s.gravity.precision = resolve_precision(parse_precision(a.precision), GravityAlgorithm::Tree);
  s.gravity.softening = softening_or(a, gpu ? kGpuSoftening : kCpuSoftening);
  s.gravity.threads = a.threads;
  s.criteria = t.criteria_given ? parse_criteria(t.criteria)
                                : std::vector<OpeningCriterion>{OpeningCriterion::Geometric,
                                                                OpeningCriterion::Bmax,
                                                                OpeningCriterion::Relative};
  s.orders = t.orders_given ? parse_orders(t.orders) : std::vector<bool>{false, true};
  s.thetas = t.thetas_given ? positive_numbers(t.thetas, "--thetas", " (0 is the direct sum)")
             : a.quick      ? std::vector<double>{0.4, 0.7}
             : report       ? std::vector<double>{0.3, 0.5, 0.7}
                            : std::vector<double>{0.3, 0.4, 0.5, 0.6, 0.7};
  s.alphas = t.alphas_given ? positive_numbers(t.alphas, "--alphas", "")
             : a.quick      ? std::vector<double>{0.001, 0.004}
             : report       ? std::vector<double>{0.0005, 0.002, 0.008}
                            : std::vector<double>{0.0005, 0.001, 0.002, 0.004, 0.008};
  s.timing = {kMinEvaluations, kMaxEvaluations, a.seconds};
  validate(s.gravity);
  return s;
}

std::string SweepPoint::series() const {
  return fmt::format("{} {}", to_string(mac), quadrupole ? "quadrupole" : "monopole");
}

std::string SweepPoint::knob() const {
  return mac == OpeningCriterion::Relative ? "alpha" : "theta";
}

std::string SweepPoint::label() const {
  return fmt::format("{} {:g}", knob(), value);
}

void mark_fronts(std::vector<SweepPoint>& points) {
  auto dominated = [&](const SweepPoint& p, auto error) {
    return std::any_of(points.begin(), points.end(), [&](const SweepPoint& q) {
      if (&q == &p || q.mac != p.mac || q.quadrupole != p.quadrupole) return false;
      const double tq = q.ms(), tp = p.ms(), eq = error(q), ep = error(p);
      return tq <= tp && eq <= ep && (tq < tp || eq < ep);
    });
  };
  for (SweepPoint& p : points) {
    p.front_median = !dominated(p, [](const SweepPoint& x) { return x.measured.errors.median; });
    p.front_p99 = !dominated(p, [](const SweepPoint& x) { return x.measured.errors.p99; });
  }
}

SweepResult run_theta_sweep(const ThetaSweep& s, std::FILE* progress) {
  (void)make_gravity_solver(s.gravity);  // before the set-up work: fails fast when unavailable
  ModelOptions model;
  model.model = s.model;
  model.n = s.n;
  model.seed = s.seed;
  const ParticleSystem ps = generate(model);
  fmt::print(progress,
             "bench theta: {} N = {} (seed {}), device {}, precision {}, softening {:g}; "
             "reference: float64 direct sum on {} sampled bodies ...",
             s.model, ps.size(), s.seed, s.device, to_string(s.gravity.precision),
             s.gravity.softening, s.sample == 0 || s.sample >= ps.size() ? ps.size() : s.sample);
  std::fflush(progress);
  const ForceReference reference = force_reference(ps, s.sample, s.sample_seed, s.gravity);
  fmt::print(progress, " {:.3g} s\n", reference.seconds);

  SweepResult r;
  r.n = ps.size();
  r.reference_seconds = reference.seconds;
  r.sampled = reference.indices.size();
  for (const OpeningCriterion mac : s.criteria) {
    for (const bool quadrupole : s.orders) {
      for (const double v : mac == OpeningCriterion::Relative ? s.alphas : s.thetas)
        r.points.push_back({mac, quadrupole, v, {}, false, false});
    }
  }
  for (std::size_t k = 0; k < r.points.size(); ++k) {
    SweepPoint& p = r.points[k];
    GravityOptions g = s.gravity;
    g.mac = p.mac;
    g.quadrupole = p.quadrupole;
    // The relative criterion's first evaluation (the warm-up) opens by g.theta (0.5).
    (p.mac == OpeningCriterion::Relative ? g.alpha : g.theta) = p.value;
    fmt::print(progress,
               "bench theta: point {}/{}: {}, {}: warm-up, then {}-{} timed evaluations ...", k + 1,
               r.points.size(), p.series(), p.label(), s.timing.min_evaluations,
               s.timing.max_evaluations);
    std::fflush(progress);
    auto solver = make_gravity_solver(g);
    p.measured = measure_solver(*solver, ps, reference, s.timing);
    fmt::print(progress, " median {:.3e}, p99 {:.3e}, {:.4g} ms (best of {})\n",
               p.measured.errors.median, p.measured.errors.p99, p.ms(), p.measured.evaluations);
    std::fflush(progress);
  }
  mark_fronts(r.points);
  return r;
}

}  // namespace nbody::cli::bench
