// The names of the option enums GravityAlgorithm, ForceKernel, IntegratorScheme and
// EnergyMethod: one
// table each, read by to_string(), the parse_*() functions (called once where options come
// in: the command line, a config file, the Python module) and the name lists of help texts.
// The engine compares the enums only.
#include <array>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "nbody/collisions.hpp"
#include "nbody/diagnostics.hpp"
#include "nbody/error.hpp"
#include "nbody/gravity.hpp"
#include "nbody/input_error.hpp"
#include "nbody/integrator.hpp"

namespace nbody {

namespace {

template <class Enum>
using NameTable = std::pair<Enum, std::string_view>;

constexpr std::array<NameTable<GravityAlgorithm>, 3> kAlgorithms{{
    {GravityAlgorithm::Direct, "direct"},
    {GravityAlgorithm::Tree, "tree"},
    {GravityAlgorithm::None, "none"},
}};
constexpr std::array<NameTable<EnergyMethod>, 5> kEnergyMethods{{
    {EnergyMethod::Auto, "auto"},
    {EnergyMethod::Exact, "exact"},
    {EnergyMethod::Tree, "tree"},
    {EnergyMethod::Solver, "solver"},
    {EnergyMethod::Off, "off"},
}};
constexpr std::array<NameTable<OpeningCriterion>, 3> kCriteria{{
    {OpeningCriterion::Geometric, "geometric"},
    {OpeningCriterion::Bmax, "bmax"},
    {OpeningCriterion::Relative, "relative"},
}};
constexpr std::array<NameTable<TreeBuild>, 2> kTreeBuilds{{
    {TreeBuild::Morton, "morton"},
    {TreeBuild::Insertion, "insertion"},
}};
constexpr std::array<NameTable<CollisionSearch>, 2> kCollisionSearches{{
    {CollisionSearch::Grid, "grid"},
    {CollisionSearch::Tree, "tree"},
}};
constexpr std::array<NameTable<ForceKernel>, 4> kKernels{{
    {ForceKernel::Fast, "fast"},
    {ForceKernel::Scalar, "scalar"},
    {ForceKernel::Tiled, "tiled"},
    {ForceKernel::Naive, "naive"},
}};
constexpr std::array<NameTable<IntegratorScheme>, 4> kSchemes{{
    {IntegratorScheme::Leapfrog, "leapfrog"},
    {IntegratorScheme::Euler, "euler"},
    {IntegratorScheme::Kinematic, "kinematic"},
    {IntegratorScheme::Ias15, "ias15"},
}};
constexpr std::array<NameTable<Ias15StepRule>, 2> kIas15Rules{{
    {Ias15StepRule::Global, "global"},
    {Ias15StepRule::Prs23, "prs23"},
}};
constexpr std::array<NameTable<TimestepMode>, 3> kTimestepModes{{
    {TimestepMode::Fixed, "fixed"},
    {TimestepMode::Adaptive, "adaptive"},
    {TimestepMode::Hierarchical, "hierarchical"},
}};
constexpr std::array<NameTable<TimestepCriterion>, 3> kTimestepCriteria{{
    {TimestepCriterion::Acceleration, "acceleration"},
    {TimestepCriterion::Dynamical, "dynamical"},
    {TimestepCriterion::Jerk, "jerk"},
}};

template <class Enum, std::size_t N>
std::string_view name_of(const std::array<NameTable<Enum>, N>& table, Enum value) {
  for (const auto& [v, name] : table) {
    if (v == value) return name;
  }
  return "?";  // not a value of the enum
}

template <class Enum, std::size_t N>
std::vector<std::string> names_of(const std::array<NameTable<Enum>, N>& table) {
  std::vector<std::string> out;
  for (const auto& entry : table) out.emplace_back(entry.second);
  return out;
}

/// The value named `name`; else throws "OPTION NAME: unknown WHAT (available: ...)".
template <class Enum, std::size_t N>
Enum parse(const std::array<NameTable<Enum>, N>& table, std::string_view name,
           std::string_view option, std::string_view what) {
  for (const auto& [v, n] : table) {
    if (n == name) return v;
  }
  throw input_error(
      option, fmt::format("unknown {} (available: {})", what, fmt::join(names_of(table), ", ")),
      name);
}

}  // namespace

std::string_view to_string(GravityAlgorithm a) {
  return name_of(kAlgorithms, a);
}
std::string_view to_string(EnergyMethod m) {
  return name_of(kEnergyMethods, m);
}
std::string_view to_string(ForceKernel k) {
  return name_of(kKernels, k);
}
std::string_view to_string(IntegratorScheme s) {
  return name_of(kSchemes, s);
}

std::string_view to_string(OpeningCriterion c) {
  return name_of(kCriteria, c);
}
OpeningCriterion parse_opening_criterion(std::string_view name) {
  return parse(kCriteria, name, "--mac", "opening criterion");
}

std::string_view to_string(TreeBuild b) {
  return name_of(kTreeBuilds, b);
}
TreeBuild parse_tree_build(std::string_view name) {
  return parse(kTreeBuilds, name, "--tree-build", "tree build");
}
std::string_view to_string(CollisionSearch s) {
  return name_of(kCollisionSearches, s);
}
CollisionSearch parse_collision_search(std::string_view name) {
  return parse(kCollisionSearches, name, "--collision-search", "collision search");
}

GravityAlgorithm parse_gravity_algorithm(std::string_view name) {
  return parse(kAlgorithms, name, "--gravity", "gravity solver");
}
ForceKernel parse_force_kernel(std::string_view name) {
  return parse(kKernels, name, "--kernel", "direct-sum kernel");
}
IntegratorScheme parse_integrator_scheme(std::string_view name) {
  return parse(kSchemes, name, "--integrator", "integrator");
}
std::string_view to_string(Ias15StepRule r) {
  return name_of(kIas15Rules, r);
}
Ias15StepRule parse_ias15_step_rule(std::string_view name) {
  return parse(kIas15Rules, name, "--ias15-adaptive", "IAS15 step rule");
}
std::string_view to_string(TimestepMode m) {
  return name_of(kTimestepModes, m);
}
TimestepMode parse_timestep_mode(std::string_view name) {
  return parse(kTimestepModes, name, "--timestep", "time-step mode");
}
std::string_view to_string(TimestepCriterion c) {
  return name_of(kTimestepCriteria, c);
}
TimestepCriterion parse_timestep_criterion(std::string_view name) {
  return parse(kTimestepCriteria, name, "--timestep-criterion", "time-step criterion");
}
EnergyMethod parse_energy_method(std::string_view name) {
  return parse(kEnergyMethods, name, "--energy", "energy method");
}
std::vector<std::string> energy_method_names() {
  return names_of(kEnergyMethods);
}

std::vector<std::string> gravity_algorithm_names() {
  return names_of(kAlgorithms);
}
std::vector<std::string> cpu_direct_kernels() {
  return {std::string(to_string(ForceKernel::Fast)), std::string(to_string(ForceKernel::Scalar))};
}
std::vector<std::string> gpu_direct_kernels() {
  return {std::string(to_string(ForceKernel::Fast)), std::string(to_string(ForceKernel::Tiled)),
          std::string(to_string(ForceKernel::Naive))};
}

}  // namespace nbody
