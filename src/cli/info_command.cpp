// nbody info FILE: energies, momenta and centre of mass of a particle file. The potential
// energy is the exact float64 pair sum up to kExactEnergyMaxBodies bodies (or with
// --exact), else that of `nbody run --energy tree` (a float64 quadrupole tree at theta 0.25:
// a relative error ~1e-6 at a small fraction of the O(N^2) cost, hours at 10^7 bodies).
#include <memory>
#include <string>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/json_output.hpp"
#include "cli/option_checks.hpp"
#include "cli/options.hpp"
#include "nbody/diagnostics.hpp"
#include "nbody/io.hpp"

namespace nbody::cli {

namespace {
struct InfoArgs {
  std::string file;
  std::string format = "auto";
  double G = 1.0;
  double softening = 0.0;
  bool exact = false;
  int threads = 0;
  bool json = false;
};

/// The diagnostics with W by the energy method `tree` (as `nbody run --energy tree`).
Diagnostics tree_diagnostics(const ParticleSystem& ps, const InfoArgs& a) {
  return with_potential(compute_moments(ps), tree_potential_energy(ps, a.G, a.softening, a.threads),
                        EnergyMethod::Tree);
}

std::string vec(const Vec3& v) {
  return fmt::format("({:.10g}, {:.10g}, {:.10g})", v.x, v.y, v.z);
}
}  // namespace

void add_info_command(CLI::App& app) {
  auto args = std::make_shared<InfoArgs>();
  auto* cmd =
      app.add_subcommand("info", "Print energies, momenta and centre of mass of a particle file");
  cmd->add_option("file", args->file, "Particle file")->required();
  add_format_option(cmd, args->format);
  cmd->add_option("--G", args->G, "Gravitational constant")->capture_default_str();
  cmd->add_option("--softening,--eps", args->softening,
                  "Plummer softening for the potential energy")
      ->check(non_negative_number())
      ->capture_default_str();
  cmd->add_flag("--exact", args->exact,
                fmt::format("The exact O(N^2) potential energy also above {} bodies (else the "
                            "tree's, theta 0.5 with quadrupoles)",
                            kExactEnergyMaxBodies));
  cmd->add_option("--threads", args->threads, "CPU threads (0 = all available)")
      ->check(whole_at_least(0))
      ->capture_default_str();
  cmd->add_flag("--json", args->json, "Print one JSON object (see docs/json.md)");
  cmd->callback([args] {
    const ParticleSystem ps = read_particles(args->file, resolve_format(args->file, args->format));
    const bool exact = args->exact || ps.size() <= kExactEnergyMaxBodies;
    const Diagnostics d =
        exact ? compute_diagnostics(ps, args->G, args->softening) : tree_diagnostics(ps, *args);
    const std::string method =
        exact ? "exact" : "tree (float64, quadrupole, theta 0.25; --exact for the O(N^2) sum)";
    if (args->json) {
      auto j = to_json(d, ps.size());
      j["energy_method"] = exact ? "exact" : "tree";
      j["file"] = args->file;
      if (ps.has_test_particles())
        j["test_particles"] =
            test_particles_json(ps.active_count(), ps.size(), ps.test_particle_type);
      fmt::print("{}\n", j.dump(2));
      return;
    }
    fmt::print("file              {}\n", args->file);
    fmt::print("bodies            {}\n", ps.size());
    if (ps.has_test_particles()) {
      fmt::print("test particles    {} (type {}; the first {} bodies are active)\n",
                 ps.size() - ps.active_count(), ps.test_particle_type, ps.active_count());
    }
    fmt::print("total mass        {:.10g}\n", d.total_mass);
    fmt::print("kinetic T         {:.10g}\n", d.kinetic);
    fmt::print("potential W       {:.10g}   (G = {:g}, softening = {:g}; {})\n", d.potential,
               args->G, args->softening, method);
    fmt::print("total energy E    {:.10g}\n", d.total_energy);
    fmt::print("virial 2T/|W|     {:.6g}\n", d.virial_ratio);
    fmt::print("momentum          {}\n", vec(d.momentum));
    fmt::print("angular momentum  {}\n", vec(d.angular_momentum));
    fmt::print("centre of mass    {}\n", vec(d.com));
    fmt::print("com velocity      {}\n", vec(d.com_velocity));
  });
}

}  // namespace nbody::cli
