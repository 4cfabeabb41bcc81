#include "cli/run/energy_advice.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "nbody/diagnostics.hpp"
#include "nbody/distributed.hpp"
#include "nbody/error.hpp"

namespace nbody::cli {

namespace {

/// v rounded down to one significant digit (0.0734 -> 0.07): a value to type.
double one_digit(double v) {
  if (!(v > 0) || !std::isfinite(v)) return v;
  const double p = std::pow(10.0, std::floor(std::log10(v)));
  return std::max(1.0, std::floor(v / p)) * p;
}

/// The radius that holds half the mass of (r^2, mass) pairs.
double half_mass_radius(std::vector<std::pair<double, double>> rm) {
  return mass_radii(std::move(rm), {0.5})[0];
}

/// The half-mass radius about the centre of mass com of the whole run: every body, or in a
/// decomposed run a sample of at most 2^20 (the bodies whose id is a multiple of
/// ceil(N / 2^20)) all-gathered, so that no rank holds all N (collective there; every rank
/// gets the same value).
double half_mass_radius_of(const Simulation& sim, const Vec3& com) {
  const std::shared_ptr<ForceReducer> group = sim.decomposed() ? world() : nullptr;
  constexpr std::uint64_t kSample = std::uint64_t(1) << 20;
  const std::uint64_t stride = group ? (std::uint64_t(sim.size()) + kSample - 1) / kSample : 1;
  const ParticleSystem& mine = sim.particles();
  std::vector<std::pair<double, double>> rm;  // r^2, mass
  for (std::size_t i = 0; i < mine.size(); ++i) {
    if (stride > 1 && mine.id[i] % stride != 0) continue;
    const double dx = mine.x[i] - com.x, dy = mine.y[i] - com.y, dz = mine.z[i] - com.z;
    rm.emplace_back(dx * dx + dy * dy + dz * dz, mine.mass[i]);
  }
  if (!group) return half_mass_radius(std::move(rm));
  ForceReducer::Bytes out(rm.size() * sizeof(double) * 2);
  for (std::size_t k = 0; k < rm.size(); ++k) {
    const double v[2] = {rm[k].first, rm[k].second};
    std::memcpy(out.data() + k * sizeof v, v, sizeof v);
  }
  std::vector<std::pair<double, double>> sample;
  for (const ForceReducer::Bytes& b : group->all_gather(out)) {
    for (std::size_t at = 0; at + 2 * sizeof(double) <= b.size(); at += 2 * sizeof(double)) {
      double v[2];
      std::memcpy(v, b.data() + at, sizeof v);
      sample.emplace_back(v[0], v[1]);
    }
  }
  return half_mass_radius(std::move(sample));
}

/// Fewer bodies than this: IAS15 (float64 direct sum, adaptive steps) is the tool.
constexpr std::size_t kFewBodies = 100;

constexpr std::string_view kAutoLine = "\nenergy = \"auto\"\n";

/// The method a used_parameters text records (`energy = "NAME"`), Auto when none.
EnergyMethod recorded_energy(const std::string& parameters) {
  const std::string_view key = "\nenergy = \"";
  const std::size_t at = ("\n" + parameters).find(key);
  if (at == std::string::npos) return EnergyMethod::Auto;
  const std::size_t begin = at + key.size() - 1;  // in parameters (no leading newline)
  const std::size_t end = parameters.find('"', begin);
  if (end == std::string::npos) return EnergyMethod::Auto;
  try {
    return parse_energy_method(parameters.substr(begin, end - begin));
  } catch (const Error&) {
    return EnergyMethod::Auto;
  }
}

}  // namespace

std::string with_chosen_energy(std::string parameters, EnergyMethod chosen) {
  const std::size_t at = ("\n" + parameters).find(kAutoLine);
  if (at == std::string::npos || chosen == EnergyMethod::Auto) return parameters;
  // at is the newline before the line in "\n" + parameters: the line starts at `at` here
  parameters.replace(at, kAutoLine.size() - 2, fmt::format("energy = \"{}\"", to_string(chosen)));
  return parameters;
}

EnergyChoice choose_run_energy(const RunArgs& a, Simulation& sim, std::uint64_t last_step,
                               const std::string* checkpoint_parameters) {
  EnergyPlan plan;
  const GravityOptions& g = sim.gravity_options();
  plan.algorithm = g.algorithm;
  plan.device = g.device;
  plan.precision = resolve_precision(g.precision, g.algorithm);
  plan.G = g.G;
  plan.n = sim.size();
  plan.steps = last_step;
  plan.evaluations = 2;  // the start and the end
  if (a.every > 0) plan.evaluations += last_step / a.every;
  if (a.outputs.stats_every > 0) plan.evaluations += last_step / a.outputs.stats_every;
  const EnergyMethod kept = checkpoint_parameters && a.energy == EnergyMethod::Auto
                                ? recorded_energy(*checkpoint_parameters)
                                : EnergyMethod::Auto;
  EnergyChoice c = choose_energy_method(a.energy, plan);
  if (kept != EnergyMethod::Auto && kept != c.method) {
    c = describe_energy_method(kept, plan);
    c.reason = "the checkpoint's run chose it";
  }
  if (a.energy == EnergyMethod::Auto) sim.set_energy_method(c.method);
  c.method = sim.energy_method();
  return c;
}

std::vector<std::string> energy_warnings(const RunArgs& a, Simulation& sim, double initial_energy,
                                         const Diagnostics& end) {
  std::vector<std::string> warnings;
  if (!end.has_energy() || a.energy_tolerance <= 0) return warnings;
  // Damping takes energy out on purpose; collisions book what they take (E + lost is kept).
  if (a.integrator.damping != 1.0) return warnings;
  const bool collide = a.collisions.model != CollisionModel::None;
  const double lost = collide ? sim.collision_totals().energy_lost : 0.0;
  const double drift = relative_energy_drift(initial_energy, end.total_energy + lost);
  if (!(drift > a.energy_tolerance) && std::isfinite(drift)) return warnings;

  std::vector<std::string> helps;
  const bool ias15 = sim.own_steps();
  const bool adaptive = has_bins(a.integrator.timestep);
  if (!ias15) {
    // Leapfrog-type errors fall as dt^2 (euler as dt): aim at a tenth of the tolerance.
    const int order = a.integrator.scheme == IntegratorScheme::Euler ? 1 : 2;
    const double factor =
        std::clamp(std::pow(0.1 * a.energy_tolerance / drift, 1.0 / order), 0.01, 0.5);
    helps.push_back(fmt::format("a smaller step (--dt {:g}{})", one_digit(a.dt * factor),
                                adaptive ? ", the largest bin" : ""));
  }
  const GravityOptions& g = sim.gravity_options();
  const std::size_t n = sim.size();
  if (g.softening == 0 && n > kFewBodies && g.algorithm != GravityAlgorithm::None) {
    // About the mean spacing of the bodies inside the half-mass radius: close encounters
    // are smoothed below it, the collisionless dynamics above it kept.
    const double rh = half_mass_radius_of(sim, end.com);  // on every rank
    const double eps = one_digit(rh / std::cbrt(double(n) / 2));
    if (eps > 0)
      helps.push_back(
          fmt::format("softening (--softening {:g}, about the spacing of the bodies "
                      "inside the half-mass radius {:.3g})",
                      eps, rh));
  }
  if (!ias15 && !adaptive)
    helps.push_back("steps of each body's own size (--timestep adaptive, with softening)");
  if (!ias15 && n <= kFewBodies && g.algorithm == GravityAlgorithm::Direct)
    helps.push_back("--integrator ias15 (few bodies: adaptive steps to machine precision)");
  if (ias15) helps.push_back("a smaller --ias15-epsilon");
  std::string list;
  for (std::size_t i = 0; i < helps.size(); ++i) {
    list += (i == 0 ? "" : i + 1 == helps.size() ? " or " : ", ") + helps[i];
  }
  warnings.push_back(fmt::format(
      "{} = {:.3g} exceeds --energy-tolerance {:g}: the integration is not accurate; try {}",
      collide ? "|d(E + lost)/E|" : "|dE/E|", drift, a.energy_tolerance, list));
  return warnings;
}

}  // namespace nbody::cli
