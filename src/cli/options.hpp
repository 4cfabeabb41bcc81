#pragma once
// Option groups shared by several subcommands, so that `gen`, `run`, `accuracy`,
// `render` and `view` spell and check them the same way.
#include <cstddef>
#include <cstdint>
#include <string>

#include "cli/cli11_fwd.hpp"

#include "nbody/collisions.hpp"
#include "nbody/diagnostics.hpp"
#include "nbody/gravity.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/integrator.hpp"
#include "nbody/io.hpp"

namespace nbody::cli {

/// -n, --seed, --G is not here (it belongs to gravity), and the per-model options
/// (--e, --a, --size, ...). `model` itself is added by the caller (positional for gen,
/// --model for run).
void add_model_options(CLI::App* app, ModelOptions& model);

/// --gravity, --kernel, --device, --precision, --softening, --G, --threads.
void add_gravity_options(CLI::App* app, GravityOptions& gravity);

/// --collisions none|bounce|merge, --restitution, --collision-iterations.
void add_collision_options(CLI::App* app, CollisionOptions& collisions);

/// --energy auto|exact|solver|off (run, view).
void add_energy_option(CLI::App* app, EnergyMethod& energy);

/// Throws nbody::Error when --restitution or --collision-iterations were given to a model
/// that does not use them.
void check_collision_options(const CLI::App& app, const CollisionOptions& collisions);

/// The check of --dt: the library's (check_time_step), so every front end says the same.
[[nodiscard]] CLI::Validator time_step_check();

/// --integrator, --damping, --timestep, --eta, --dt-min.
void add_integrator_options(CLI::App* app, IntegratorOptions& integrator);
/// After parsing (and a config file): IAS15 takes --dt as its first step's guess only, so
/// where --dt was not given it gets REBOUND's default, kIas15FirstStep.
void default_ias15_first_step(const CLI::App& app, const IntegratorOptions& integrator, double& dt);

/// --format text|csv|auto.
void add_format_option(CLI::App* app, std::string& format);

/// Where the bodies come from: -i FILE (an existing file), --format, and --model NAME,
/// -i and --model excluding each other. Returns the two options (for further excludes).
struct SourceOptions {
  CLI::Option* input;
  CLI::Option* model;
};
SourceOptions add_source_options(CLI::App* app, std::string& input, std::string& format,
                                 std::string& model);

/// --dim 2|3.
void add_dim_option(CLI::App* app, int& dim);
/// --n-active and --test-particle-type (REBOUND's N_active and testparticle_type).
void add_test_particle_options(CLI::App* app, std::uint64_t& n_active,
                               std::uint64_t& test_particles, int& type);

/// The bodies a command works on: the file given with -i (input non-empty), or the model
/// given with --model, generated for this G and dimension. Throws nbody::Error naming the
/// command when neither was given.
[[nodiscard]] ParticleSystem load_or_generate(const std::string& input, const std::string& format,
                                              ModelOptions model, double G, int dim,
                                              const CLI::App& app, const std::string& command);

/// From this many bodies a text or CSV output is slow (measured on a 2-core VM: CSV 0.85 M
/// bodies/s and 156 B a body, HDF5 3.3 M bodies/s and 64 B): slow_output_notice says so.
inline constexpr std::size_t kSlowTextBodies = 10'000'000;
/// What writing n bodies to `path` in `format` costs when it is text or CSV of at least
/// kSlowTextBodies bodies ("" otherwise), and that HDF5 is faster: printed before such a write.
[[nodiscard]] std::string slow_output_notice(const std::string& path, FileFormat format,
                                             std::size_t n);

}  // namespace nbody::cli
