#include "python/run_options.hpp"

#include <fmt/format.h>

#include "nbody/error.hpp"
#include "nbody/input_error.hpp"

namespace nbody::python {

namespace {

/// A Python int the C++ type cannot hold: a ValueError naming the option, not a TypeError
/// that says "expected an integer, got int".
void refuse_out_of_range(nb::handle value, const char* name, const char* range) {
  if (PyLong_Check(value.ptr()) && !nb::isinstance<nb::bool_>(value)) {
    throw input_error(name, range, nb::cast<std::string>(nb::repr(value)));
  }
}

double to_double(nb::handle value, const char* name) {
  double v = 0;
  if (nb::isinstance<nb::bool_>(value) || !nb::try_cast(value, v)) {
    refuse_out_of_range(value, name, "is beyond the range of a float64");
    throw nb::type_error(
        fmt::format("{}: expected a number, got {}", name, nb::type_name(value.type()).c_str())
            .c_str());
  }
  return v;
}

int to_int(nb::handle value, const char* name) {
  int v = 0;
  if (nb::isinstance<nb::bool_>(value) || !nb::try_cast(value, v)) {
    refuse_out_of_range(value, name, "is beyond the range of a 32-bit integer");
    throw nb::type_error(
        fmt::format("{}: expected an integer, got {}", name, nb::type_name(value.type()).c_str())
            .c_str());
  }
  return v;
}

bool to_bool(nb::handle value, const char* name) {
  if (!nb::isinstance<nb::bool_>(value)) {
    throw nb::type_error(
        fmt::format("{}: expected True or False, got {}", name, nb::type_name(value.type()).c_str())
            .c_str());
  }
  return nb::cast<bool>(value);
}

std::string to_str(nb::handle value, const char* name) {
  if (!nb::isinstance<nb::str>(value)) {
    throw nb::type_error(
        fmt::format("{}: expected a string, got {}", name, nb::type_name(value.type()).c_str())
            .c_str());
  }
  return nb::cast<std::string>(value);
}

// One line per option: name, help (the CLI's), getter, setter.
#define NBODY_OPTION(NAME, DOC, GET, CONVERT, SET)                              \
  OptionSpec {                                                                  \
    NAME, DOC, [](const RunOptions& o) -> nb::object { return nb::cast(GET); }, \
        [](RunOptions& o, nb::handle value) {                                   \
          const auto v = CONVERT(value, NAME);                                  \
          SET;                                                                  \
        },                                                                      \
        std::string_view(NAME) != "dt"                                          \
  }

const std::vector<OptionSpec> kOptions = {
    NBODY_OPTION("dt",
                 "Time step of step() and evolve() (evolve shortens its last step to land on t).",
                 o.step(), to_double, (o.dt = v, o.dt_set = true)),
    NBODY_OPTION("G", "Gravitational constant (e.g. 6.67430e-11 for SI units). Changes the forces.",
                 o.gravity.G, to_double, o.gravity.G = v),
    NBODY_OPTION("softening",
                 "Plummer softening length epsilon: a = G sum m r / (r^2 + eps^2)^(3/2).",
                 o.gravity.softening, to_double, o.gravity.softening = v),
    NBODY_OPTION("gravity",
                 "Gravity solver: 'direct' (exact O(N^2) sum), 'tree' (Barnes-Hut, O(N log N)) or "
                 "'none' (no gravity: collisions only; G = 0 is the same).",
                 std::string(to_string(o.gravity.algorithm)), to_str,
                 o.gravity.algorithm = parse_gravity_algorithm(v)),
    NBODY_OPTION(
        "theta",
        "Tree opening angle: a cell of size s at distance d is used whole when s/d < theta.",
        o.gravity.theta, to_double, o.gravity.theta = v),
    NBODY_OPTION("quadrupole",
                 "Tree: add quadrupole moments (about 4x smaller errors at the same theta).",
                 o.gravity.quadrupole, to_bool, o.gravity.quadrupole = v),
    NBODY_OPTION("mac",
                 "Tree opening criterion: 'geometric' (s/d < theta), 'bmax' (b_max/d < theta) or "
                 "'relative' (G M/d^2 (s/d)^2 <= alpha |a_old|, GADGET-4).",
                 std::string(to_string(o.gravity.mac)), to_str,
                 o.gravity.mac = parse_opening_criterion(v)),
    NBODY_OPTION("alpha", "Tree, mac 'relative': force error accepted per cell, relative to |a|.",
                 o.gravity.alpha, to_double, o.gravity.alpha = v),
    NBODY_OPTION("tree_build",
                 "Tree build: 'morton' (keys, sort, split) or 'insertion' (the seed documents' "
                 "concurrent insertion under per-cell locks); the same forces within rounding.",
                 std::string(to_string(o.gravity.tree_build)), to_str,
                 o.gravity.tree_build = parse_tree_build(v)),
    NBODY_OPTION(
        "kernel",
        "Direct-sum kernel. CPU: 'fast' (SIMD + OpenMP) or 'scalar' (reference); GPU: 'fast', "
        "'tiled' or 'naive'.",
        std::string(to_string(o.gravity.kernel)), to_str, o.gravity.kernel = parse_force_kernel(v)),
    NBODY_OPTION("block_size", "GPU: threads per block (0 = the kernel's default).",
                 o.gravity.block_size, to_int, o.gravity.block_size = v),
    NBODY_OPTION(
        "deterministic",
        "GPU: bit-identical results run after run (the direct sum evaluates each pair from both "
        "sides instead of once with atomics).",
        o.gravity.deterministic, to_bool, o.gravity.deterministic = v),
    NBODY_OPTION(
        "device",
        "Where the simulation runs: 'cpu', or 'gpu' (the whole state on the GPU; arrays are then "
        "copies downloaded from it).",
        std::string(to_string(o.gravity.device)), to_str, o.gravity.device = parse_device(v)),
    NBODY_OPTION(
        "precision",
        "Force arithmetic: 'float', 'double', or 'auto' (double for the direct sum, float for the "
        "tree). The state is always float64.",
        std::string(to_string(o.gravity.precision)), to_str,
        o.gravity.precision = parse_precision(v)),
    NBODY_OPTION(
        "energy_method",
        "How energy() gets the potential energy: 'exact' (float64 pair sum, O(N^2)), 'solver' "
        "(the solver's own potentials: the tree's approximation at the tree's cost), 'off', or "
        "'auto' (exact for the direct sum and N <= 65536, else solver).",
        std::string(to_string(o.energy)), to_str, o.energy = parse_energy_method(v)),
    NBODY_OPTION("threads",
                 "CPU threads for forces (0: one below 2048 bodies with the direct sum or 4096 "
                 "with the tree, else all available).",
                 o.gravity.threads, to_int, o.gravity.threads = v),
    NBODY_OPTION(
        "integrator",
        "Time integrator: 'leapfrog' (kick-drift-kick), 'euler' (semi-implicit), 'kinematic', or "
        "'ias15' (15th order with its own adaptive steps to machine precision, CPU direct sum: "
        "step() then takes one of its steps, dt is the first one's guess, evolve(t) lands on t).",
        std::string(to_string(o.integrator.scheme)), to_str,
        o.integrator.scheme = parse_integrator_scheme(v)),
    NBODY_OPTION("damping",
                 "Velocities times this factor after each step's velocity update (1 = none).",
                 o.integrator.damping, to_double, o.integrator.damping = v),
    NBODY_OPTION(
        "timestep",
        "Time steps: 'fixed' (every body steps by dt) or 'adaptive' (hierarchical: each body in a "
        "bin of step dt/2^k from sqrt(2 eta eps / |a|); leapfrog only).",
        std::string(to_string(o.integrator.timestep)), to_str,
        o.integrator.timestep = parse_timestep_mode(v)),
    NBODY_OPTION(
        "eta",
        "Adaptive steps: the accuracy parameter of dt_i = sqrt(2 eta eps / |a_i|) (without "
        "softening sqrt(2 eta |phi_i|) / |a_i|).",
        o.integrator.eta, to_double, o.integrator.eta = v),
    NBODY_OPTION("timestep_criterion",
                 "Adaptive steps: what sets a body's step: 'acceleration' (sqrt(2 eta eps / |a|)) "
                 "or 'dynamical' (eta / omega, omega^2 = G M / r^3 from the neighbourhood's "
                 "density or the body's orbit; Zemp et al. 2007).",
                 std::string(to_string(o.integrator.timestep_criterion)), to_str,
                 o.integrator.timestep_criterion = parse_timestep_criterion(v)),
    NBODY_OPTION("dt_min",
                 "Adaptive steps: the smallest step allowed (0: dt/2^30); the bodies that want "
                 "less are counted in timestep_stats()['floored'].",
                 o.integrator.dt_min, to_double, o.integrator.dt_min = v),
    NBODY_OPTION("ias15_epsilon",
                 "IAS15: the steps' accuracy (Rein & Spiegel 2015's epsilon; 0: fixed steps of "
                 "dt).",
                 o.integrator.ias15_epsilon, to_double, o.integrator.ias15_epsilon = v),
    NBODY_OPTION("ias15_adaptive",
                 "IAS15's step rule: 'global' (the paper's, max|b6| / max|a|) or 'prs23' (Pham, "
                 "Rein & Spiegel 2024; REBOUND's default).",
                 std::string(to_string(o.integrator.ias15_rule)), to_str,
                 o.integrator.ias15_rule = parse_ias15_step_rule(v)),
    NBODY_OPTION(
        "collisions",
        "Collisions between bodies with radii: 'none', 'bounce' or 'merge' (merges change N).",
        std::string(to_string(o.collisions.model)), to_str,
        o.collisions.model = parse_collision_model(v)),
    NBODY_OPTION("restitution",
                 "bounce: coefficient of restitution (1 elastic, 0 perfectly inelastic).",
                 o.collisions.restitution, to_double, o.collisions.restitution = v),
    NBODY_OPTION("collision_iterations", "Collision resolution passes per step.",
                 o.collisions.iterations, to_int, o.collisions.iterations = v),
    NBODY_OPTION("collision_search",
                 "How contact candidates are found: 'grid' or 'tree' (seed 001's quadtree "
                 "search); the same contacts.",
                 std::string(to_string(o.collisions.search)), to_str,
                 o.collisions.search = parse_collision_search(v)),
};

#undef NBODY_OPTION

}  // namespace

void validate(const RunOptions& o, int dim) {
  check_time_step(o.dt);
  GravityOptions g = o.gravity;
  g.dim = dim;
  nbody::validate(g);
  nbody::validate(o.integrator);
  CollisionOptions c = o.collisions;
  c.dim = dim;
  nbody::validate(c);
}

const std::vector<OptionSpec>& option_specs() {
  return kOptions;
}

const OptionSpec* find_option(std::string_view name) {
  for (const auto& spec : kOptions) {
    if (name == spec.name) return &spec;
  }
  return nullptr;
}

std::string option_names() {
  std::string out;
  for (const auto& spec : kOptions) out += (out.empty() ? "" : ", ") + std::string(spec.name);
  return out;
}

void apply_keywords(RunOptions& options, const nb::dict& kwargs, const char* caller,
                    const std::vector<std::string>& skip) {
  for (auto [key, value] : kwargs) {
    const std::string name = nb::cast<std::string>(key);
    bool skipped = false;
    for (const auto& s : skip) skipped = skipped || s == name;
    if (skipped) continue;
    const OptionSpec* spec = find_option(name);
    if (!spec) {
      throw nb::type_error(
          fmt::format("{} got an unexpected keyword argument '{}' (run options: {})", caller,
                      printable(name), option_names())
              .c_str());
    }
    spec->set(options, value);
  }
}

nb::dict options_dict(const RunOptions& options) {
  nb::dict d;
  for (const auto& spec : kOptions) d[spec.name] = spec.get(options);
  return d;
}

}  // namespace nbody::python
