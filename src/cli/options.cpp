#include <CLI/CLI.hpp>

#include "cli/option_checks.hpp"
#include "cli/options.hpp"
#include "cli/usage_error.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <functional>
#include <string_view>
#include <type_traits>

#include "nbody/error.hpp"
#include "nbody/ias15_first_step.hpp"
#include "nbody/io.hpp"

namespace nbody::cli {

namespace {
std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}
}  // namespace

namespace {

/// A CLI11 check that runs the library's own validation on the value, so that the command
/// line, a --config file and the Python module all report the library's message (thrown
/// through CLI11 as an nbody::Error). Values that are not numbers are left to CLI11's
/// conversion, which says so.
template <class Value>
CLI::Validator library_check(std::function<void(Value)> check) {
  return CLI::Validator(
      [check](std::string& text) {
        if constexpr (std::is_same_v<Value, std::string>) {
          check(text);
        } else {
          Value v{};
          if (CLI::detail::lexical_cast(text, v)) check(v);
        }
        return std::string();
      },
      "", "");
}

/// The check of one field of an options struct: the library's validate() of a default
/// struct with that field set (GravityOptions, IntegratorOptions, CollisionOptions).
template <class Options, class Field>
CLI::Validator field_check(Field Options::*field) {
  return library_check<Field>([field](Field v) {
    Options o;
    o.*field = v;
    validate(o);
  });
}

/// An option whose name is parsed into an enum once, by the library's parse function (whose
/// message says what an unknown name is); the default shown is the field's value now.
template <class Enum>
CLI::Option* add_enum_option(CLI::App* app, const std::string& name, Enum& field,
                             Enum (*parse)(std::string_view), const std::string& description) {
  return app
      ->add_option_function<std::string>(
          name, [&field, parse](const std::string& v) { field = parse(v); }, description)
      ->check(library_check<std::string>([parse](const std::string& v) { (void)parse(v); }))
      ->default_str(std::string(to_string(field)));
}

}  // namespace

void add_model_options(CLI::App* app, ModelOptions& m) {
  // The parameters are checked by the library's validate(ModelOptions), whatever the model:
  // the same message as Python's generate() and a --config file.
  app->add_option("-n,--count", m.n, "Number of bodies")
      ->check(whole_at_least(1))
      ->capture_default_str();
  app->add_option("--seed", m.seed, "Random seed (same seed, same bodies)")->capture_default_str();
  app->add_option("--radius", m.radius,
                  "Radius given to every body (run -i FILE: replaces the radii of the file)")
      ->check(field_check(&ModelOptions::radius));
  app->add_option("--mass", m.mass, "Total mass (uniform-cube, uniform-sphere, cold-sphere)")
      ->check(field_check(&ModelOptions::mass))
      ->capture_default_str();
  app->add_option("--size", m.size, "Cube half-edge or sphere radius (uniform-*, cold-sphere)")
      ->check(field_check(&ModelOptions::size))
      ->capture_default_str();
  app->add_option("--velocity", m.velocity, "uniform-*: velocity components uniform in [-v, v]")
      ->check(field_check(&ModelOptions::velocity))
      ->capture_default_str();
  app->add_option("--e", m.e, "kepler: eccentricity, 0 <= e < 1")
      ->check(field_check(&ModelOptions::e))
      ->capture_default_str();
  app->add_option("--a", m.a, "kepler: semi-major axis")
      ->check(field_check(&ModelOptions::a))
      ->capture_default_str();
  app->add_option("--separation", m.separation, "two-clusters: distance between the centres")
      ->check(field_check(&ModelOptions::separation))
      ->capture_default_str();
  app->add_option("--impact", m.impact, "two-clusters: impact parameter, >= 0")
      ->check(field_check(&ModelOptions::impact))
      ->capture_default_str();
  app->add_option("--disk-mass", m.disk_mass,
                  "disk: total mass of the disk (central mass 1; 0: test particles)")
      ->check(field_check(&ModelOptions::disk_mass))
      ->capture_default_str();
  app->add_option("--scale-length", m.scale_length, "disk: exponential scale length")
      ->check(field_check(&ModelOptions::scale_length))
      ->capture_default_str();
  app->add_option("--rmax", m.rmax,
                  "hernquist: truncation radius in units of the scale length a, > 0 (100: the "
                  "outer 2 % of the mass left out)")
      ->check(field_check(&ModelOptions::rmax))
      ->capture_default_str();
  app->add_option("--concentration", m.concentration,
                  "nfw: concentration c = r_200 / r_s, > 0 (the halo is truncated at r_200)")
      ->check(field_check(&ModelOptions::concentration))
      ->capture_default_str();
}

CLI::Validator time_step_check() {
  return library_check<double>([](double dt) { check_time_step(dt); });
}

void add_gravity_options(CLI::App* app, GravityOptions& g) {
  add_enum_option(app, "--gravity", g.algorithm, parse_gravity_algorithm,
                  "Gravity solver: direct (exact O(N^2) sum), tree (Barnes-Hut, O(N log N)) or "
                  "none (no gravity: ballistic and granular runs, collisions only; --G 0 is the "
                  "same)");
  app->add_option("--theta", g.theta,
                  "tree: opening angle of --mac geometric and bmax (relative: the first evaluation "
                  "only); a cell of size s at distance d is used whole when s/d < theta (0 = exact "
                  "direct sum, with every criterion)")
      ->check(field_check(&GravityOptions::theta))
      ->capture_default_str();
  app->add_flag("--quadrupole", g.quadrupole,
                "tree: add quadrupole moments (more accurate at the same theta)");
  add_enum_option(
      app, "--mac", g.mac, parse_opening_criterion,
      "tree: opening criterion: geometric (cell edge s / distance d < theta), bmax "
      "(largest distance from the cell's centre of mass to its bodies / d < theta) or "
      "relative (GADGET-4: G M / d^2 (s / d)^2 <= alpha |a| with the last "
      "acceleration; the first evaluation uses theta, and theta 0 is the direct sum with "
      "every criterion)");
  add_enum_option(app, "--tree-build", g.tree_build, parse_tree_build,
                  "tree: how the tree is built: morton (keys, radix sort, split; no locks) or "
                  "insertion (the seed documents' build after Burtscher & Pingali 2011: bodies "
                  "inserted concurrently from the root under per-cell locks; the same tree "
                  "layout afterwards, forces within the tree's error of morton's)");
  app->add_option("--alpha", g.alpha,
                  "tree, --mac relative: force error accepted per cell, relative to |a|")
      ->check(field_check(&GravityOptions::alpha))
      ->capture_default_str();
  add_enum_option(
      app, "--kernel", g.kernel, parse_force_kernel,
      "Direct-sum kernel. CPU: fast (SIMD + OpenMP) or scalar (reference); GPU: fast (from "
      "16384 bodies each pair once, Newton's third law, its force added to both bodies; below "
      "that, or with --block-size or --deterministic, one-sided: register blocking + shared "
      "memory, the j-range split over blocks), tiled (shared-memory tiles) or naive (global "
      "memory)");
  app->add_option("--block-size", g.block_size,
                  "GPU: threads per block (0 = the kernel's default: fast 512 for its one-sided "
                  "kernel, a fixed 256 (float) or 128 (double) for each pair once from 16384 "
                  "bodies; tiled and naive 256. A size given keeps fast one-sided at every N. "
                  "tiled and fast need a power of two from 8 to 1024, naive 1 to 1024)")
      ->check(field_check(&GravityOptions::block_size))
      ->capture_default_str();
  app->add_flag(
      "--deterministic", g.deterministic,
      "GPU: bit-identical results run after run (the direct sum then evaluates each pair from both "
      "sides instead of once with atomics: slower above 16384 bodies; the tree is always "
      "deterministic)");
  app->add_option_function<std::string>(
         "--device", [&g](const std::string& v) { g.device = parse_device(v); },
         "Where forces are computed: cpu or gpu")
      ->check(library_check<std::string>([](const std::string& v) { (void)parse_device(v); }))
      ->default_str("cpu");
  app->add_option_function<std::string>(
         "--precision", [&g](const std::string& v) { g.precision = parse_precision(v); },
         "Force arithmetic: float (float32), double (float64), or auto (double for the direct sum, "
         "float "
         "for the tree, whose ~1e-3 truncation error dwarfs float rounding)")
      ->check(library_check<std::string>([](const std::string& v) { (void)parse_precision(v); }))
      ->default_str("auto");
  app->add_option("--softening,--eps", g.softening, "Plummer softening length epsilon")
      ->check(field_check(&GravityOptions::softening))
      ->capture_default_str();
  app->add_option("--G", g.G, "Gravitational constant (e.g. 6.67430e-11 for SI units)")
      ->check(field_check(&GravityOptions::G))
      ->capture_default_str();
  app->add_option("--threads", g.threads,
                  "CPU threads for forces (0: one below 2048 bodies with the direct sum or 4096 "
                  "with the tree, where sharing an evaluation does not pay, else all available)")
      ->check(field_check(&GravityOptions::threads))
      ->capture_default_str();
  app->add_option("--max-bodies-per-rank", g.max_bodies_per_rank,
                  "Under mpirun, where every rank owns its bodies: the most bodies a rank may "
                  "own (its memory cap; the cuts respect it, and a run whose N does not fit P "
                  "ranks of this many stops at the start). 0: no cap")
      ->capture_default_str();
}

void add_energy_option(CLI::App* app, EnergyMethod& energy) {
  add_enum_option(
      app, "--energy", energy, parse_energy_method,
      "How the potential energy is computed: exact (float64 pair sum, O(N^2); on the GPU with "
      "--device gpu; ~N/700 tree steps each), tree (float64 quadrupole tree, theta 0.25, on the "
      "run's device: error ~1e-6 of E, ~4-21 tree steps each), solver (the potentials the solver "
      "computes with the forces: the direct sum's are exact, the tree's err by ~1e-4 of E; "
      "almost free), off (kinetic energy and momenta only), or auto (run: the most accurate "
      "whose planned evaluations cost <= 7.5% of the steps, said in the run header; "
      "docs/energy.md)");
}

void add_collision_options(CLI::App* app, CollisionOptions& c) {
  app->add_option_function<std::string>(
         "--collisions", [&c](const std::string& v) { c.model = parse_collision_model(v); },
         "Collisions between bodies with radii: none, bounce (impulse with --restitution along "
         "the line of centres, then push-apart) or merge (mass, momentum and volume kept; the "
         "smaller id survives)")
      ->check(
          library_check<std::string>([](const std::string& v) { (void)parse_collision_model(v); }))
      ->default_str("none");
  app->add_option(
         "--restitution", c.restitution,
         "bounce: coefficient of restitution e (1 elastic: momentum and kinetic energy kept; 0 "
         "perfectly inelastic)")
      ->check(field_check(&CollisionOptions::restitution))
      ->capture_default_str();
  app->add_option("--collision-iterations", c.iterations,
                  "Collision resolution passes per step (more passes leave less overlap)")
      ->check(field_check(&CollisionOptions::iterations))
      ->capture_default_str();
  add_enum_option(app, "--collision-search", c.search, parse_collision_search,
                  "How contact candidates are found: grid (a uniform grid of the largest "
                  "diameter) or tree (seed 001's quadtree/octree search: the body's leaf, its "
                  "edge and corner neighbours, climbing to the parent for large bodies); the "
                  "same contacts");
}

void check_collision_options(const CLI::App& app, const CollisionOptions& c) {
  if (app.count("--restitution") && c.model != CollisionModel::Bounce) {
    throw Error(fmt::format("--restitution: only used with --collisions bounce (not {})",
                            to_string(c.model)));
  }
  if (app.count("--collision-iterations") && c.model == CollisionModel::None) {
    throw Error("--collision-iterations: needs --collisions bounce or merge");
  }
  if (app.count("--collision-search") && c.model == CollisionModel::None) {
    throw Error("--collision-search: needs --collisions bounce or merge");
  }
}

void default_ias15_first_step(const CLI::App& app, const IntegratorOptions& integrator,
                              double& dt) {
  const CLI::Option* given = app.get_option_no_throw("--dt");
  if (integrator.scheme == IntegratorScheme::Ias15 && given && given->count() == 0)
    dt = kIas15FirstStep;
}

void add_integrator_options(CLI::App* app, IntegratorOptions& i) {
  add_enum_option(app, "--integrator", i.scheme, parse_integrator_scheme,
                  "Time integrator: leapfrog (kick-drift-kick), euler (semi-implicit), kinematic "
                  "(x += (v + a dt/2) dt, v += a dt), ias15 (15th order, adaptive steps to "
                  "machine precision; --dt is its first step's guess; CPU direct sum, "
                  "docs/ias15.md)");
  app->add_option("--damping", i.damping,
                  "Velocity damping factor applied after each step's velocity update (1 = none)")
      ->check(field_check(&IntegratorOptions::damping))
      ->capture_default_str();
  add_enum_option(app, "--timestep", i.timestep, parse_timestep_mode,
                  "Time steps: fixed (every body steps by --dt), adaptive (block steps: each "
                  "body in a bin of step dt/2^k, k <= 30, from sqrt(2 eta eps / |a|); leapfrog "
                  "only) or hierarchical (the same bins, each pair's interaction kicked with "
                  "its slower body's step: momentum kept to rounding; CPU; docs/timesteps.md)");
  app->add_option("--eta", i.eta,
                  "Adaptive steps: accuracy parameter of dt_i = sqrt(2 eta eps / |a_i|) (without "
                  "softening sqrt(2 eta |phi_i|) / |a_i|); smaller is more accurate")
      ->check(field_check(&IntegratorOptions::eta))
      ->capture_default_str();
  add_enum_option(app, "--timestep-criterion", i.timestep_criterion, parse_timestep_criterion,
                  "Adaptive steps: what sets a body's step: acceleration (sqrt(2 eta eps / |a|), "
                  "GADGET's), dynamical (eta / omega, omega^2 = G M / r^3 from the density of "
                  "the body's neighbourhood or its own orbit, Zemp et al. 2007) or jerk "
                  "(eta |a| / |da/dt|, Aarseth's first-order form; the CPU direct sum, one "
                  "process; docs/timesteps.md)");
  app->add_option("--dt-min", i.dt_min,
                  "Adaptive steps: the smallest step allowed (0: dt/2^30); bodies that want less "
                  "are counted and reported")
      ->check(field_check(&IntegratorOptions::dt_min))
      ->capture_default_str();
  app->add_option("--ias15-epsilon", i.ias15_epsilon,
                  "IAS15: the steps' accuracy (Rein & Spiegel 2015's epsilon; 0: fixed steps of "
                  "--dt)")
      ->check(field_check(&IntegratorOptions::ias15_epsilon))
      ->capture_default_str();
  add_enum_option(app, "--ias15-adaptive", i.ias15_rule, parse_ias15_step_rule,
                  "IAS15's step rule: global (the paper's: max|b6| / max|a| held near epsilon) or "
                  "prs23 (Pham, Rein & Spiegel 2024, from each body's acceleration, jerk and "
                  "snap; REBOUND's default)");
}

void add_format_option(CLI::App* app, std::string& format) {
  app->add_option("--format", format,
                  "File format: " + joined(format_names()) +
                      ", or auto (from the extension: .csv is CSV, "
                      ".hdf5/.h5/.hdf HDF5, anything else text)")
      ->check(one_of([] {
        auto names = format_names();
        names.emplace_back("auto");
        return names;
      }()))
      ->capture_default_str();
}

void add_dim_option(CLI::App* app, int& dim) {
  app->add_option("--dim", dim, "Dimensions: 3, or 2 for a planar system (z = vz = 0 exactly)")
      ->check(one_of({"2", "3"}))
      ->capture_default_str();
}

void add_test_particle_options(CLI::App* app, std::uint64_t& n_active,
                               std::uint64_t& test_particles, int& type) {
  auto* active =
      app->add_option("--n-active", n_active,
                      "Test particles: the first N bodies are active, the others test particles, "
                      "which feel the active bodies and never each other (REBOUND's N_active; "
                      "bodies of mass 0 after all the others are test particles without it); the "
                      "forces cost O(N_bodies * N)");
  app->add_option("--test-particles", test_particles,
                  "Test particles: the last N bodies are (the same as --n-active with the number "
                  "of bodies less N)")
      ->excludes(active);
  app->add_option("--test-particle-type", type,
                  "Test particles: 0, the active bodies do not feel them (their masses play no "
                  "part in the forces); 1, they also pull on the active bodies (REBOUND's "
                  "testparticle_type)")
      ->check(one_of({"0", "1"}))
      ->capture_default_str();
}

ParticleSystem load_or_generate(const std::string& input, const std::string& format,
                                ModelOptions model, double G, int dim, const CLI::App& app,
                                const std::string& command) {
  if (!input.empty()) return read_particles(input, resolve_format(input, format));
  if (app.count("--model") == 0) {
    throw UsageError("nbody " + command +
                     " needs bodies: give an input file (-i FILE) or a model (--model MODEL -n N)");
  }
  model.G = G;
  model.dim = dim;
  return generate(model);
}

SourceOptions add_source_options(CLI::App* app, std::string& input, std::string& format,
                                 std::string& model) {
  auto* in = app->add_option("-i,--input", input,
                             "Initial conditions file: text, CSV or HDF5 (see --format)")
                 ->check(existing_file());
  add_format_option(app, format);
  auto* m = app->add_option("--model", model,
                            "Generate the initial conditions: " +
                                fmt::format("{}", fmt::join(model_names(), ", ")))
                ->check(one_of(model_names()));
  in->excludes(m);
  return {in, m};
}

std::string slow_output_notice(const std::string& path, FileFormat format, std::size_t n) {
  if (format == FileFormat::Hdf5 || n < kSlowTextBodies) return {};
  // Rates measured writing 4M Plummer bodies with nbody gen (a 2-core VM's disk).
  constexpr double kTextBytes = 156, kTextRate = 0.85e6, kHdf5Bytes = 64, kHdf5Rate = 3.3e6;
  return fmt::format(
      "nbody: writing {} bodies to {} as {} takes long (about {:.0f} s and {:.1f} GB here); "
      "HDF5 (a .hdf5 name or --format hdf5) writes them about {:.0f}x faster in {:.1f} GB\n",
      n, path, format == FileFormat::Csv ? "CSV" : "text", double(n) / kTextRate,
      double(n) * kTextBytes / 1e9, kHdf5Rate / kTextRate, double(n) * kHdf5Bytes / 1e9);
}

}  // namespace nbody::cli
