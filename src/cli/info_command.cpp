// nbody info FILE: energies, momenta and centre of mass of a particle file.
#include <memory>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/json_output.hpp"
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
  bool json = false;
};

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
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_flag("--json", args->json, "Print one JSON object (see docs/json.md)");
  cmd->callback([args] {
    const ParticleSystem ps = read_particles(args->file, resolve_format(args->file, args->format));
    const Diagnostics d = compute_diagnostics(ps, args->G, args->softening);
    if (args->json) {
      auto j = to_json(d, ps.size());
      j["file"] = args->file;
      fmt::print("{}\n", j.dump(2));
      return;
    }
    fmt::print("file              {}\n", args->file);
    fmt::print("bodies            {}\n", ps.size());
    fmt::print("total mass        {:.10g}\n", d.total_mass);
    fmt::print("kinetic T         {:.10g}\n", d.kinetic);
    fmt::print("potential W       {:.10g}   (G = {:g}, softening = {:g})\n", d.potential, args->G,
               args->softening);
    fmt::print("total energy E    {:.10g}\n", d.total_energy);
    fmt::print("virial 2T/|W|     {:.6g}\n", d.virial_ratio);
    fmt::print("momentum          {}\n", vec(d.momentum));
    fmt::print("angular momentum  {}\n", vec(d.angular_momentum));
    fmt::print("centre of mass    {}\n", vec(d.com));
    fmt::print("com velocity      {}\n", vec(d.com_velocity));
  });
}

}  // namespace nbody::cli
