// nbody render under mpirun: the simulation on every rank, the frames' bodies gathered to
// rank 0 (render_ranks.hpp).
#include "cli/render_ranks.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <utility>
#include <vector>

#include "cli/options.hpp"
#include "nbody/error.hpp"

namespace nbody::cli {

Simulation render_simulation(const std::string& input, const std::string& format,
                             const ModelOptions& model, const SimulationOptions& options, int dim,
                             const CLI::App& app, const std::shared_ptr<ForceReducer>& ranks) {
  const bool several = ranks && ranks->parts() > 1;
  if (several && input.empty() && Simulation::decomposes(options, dim, ranks.get())) {
    // Each rank draws its own share (generate_window: the bits of the whole model).
    ModelOptions m = model;
    m.G = options.gravity.G;
    m.dim = dim;
    const std::size_t total = model_bodies(m);
    return Simulation::from_share(generate_share(m, *ranks), total, options, ranks);
  }
  ParticleSystem initial =
      load_or_generate(input, format, model, options.gravity.G, dim, app, "render");
  if (!input.empty() && app.count("--radius") > 0)
    for (double& r : initial.radius) r = model.radius;
  if (dim == 2) initial.make_planar();
  return Simulation(std::move(initial), options, several ? ranks : nullptr);
}

namespace {

struct DrawnBody {
  double x, y, z, vx, vy, vz, mass, radius;
  std::uint64_t id;
};

}  // namespace

const ParticleSystem& drawn_bodies(const Simulation& sim, ForceReducer* ranks,
                                   ParticleSystem& gathered, std::size_t most) {
  if (!sim.decomposed() || ranks == nullptr) return sim.particles();
  const ParticleSystem& mine = sim.particles();
  const std::uint64_t stride = std::max<std::uint64_t>(
      1, (std::uint64_t(sim.size()) + most - 1) / std::uint64_t(std::max<std::size_t>(most, 1)));
  std::vector<ForceReducer::Bytes> send(static_cast<std::size_t>(ranks->parts()));
  ForceReducer::Bytes& out = send[0];  // everything to rank 0
  for (std::size_t i = 0; i < mine.size(); ++i) {
    if (mine.id[i] % stride != 0) continue;
    const DrawnBody b{mine.x[i],  mine.y[i],    mine.z[i],      mine.vx[i], mine.vy[i],
                      mine.vz[i], mine.mass[i], mine.radius[i], mine.id[i]};
    const std::size_t at = out.size();
    out.resize(at + sizeof b);
    std::memcpy(out.data() + at, &b, sizeof b);
  }
  const std::vector<ForceReducer::Bytes> got = ranks->exchange(send);
  ParticleSystem& drawn = gathered;
  drawn.clear();
  drawn.dim = mine.dim;
  drawn.time = mine.time;
  if (ranks->part() != 0) return drawn;
  std::vector<DrawnBody> bodies;
  for (const ForceReducer::Bytes& b : got) {
    if (b.size() % sizeof(DrawnBody) != 0)
      throw Error("nbody render: a rank sent a malformed frame");
    const std::size_t at = bodies.size();
    bodies.resize(at + b.size() / sizeof(DrawnBody));
    if (!b.empty()) std::memcpy(bodies.data() + at, b.data(), b.size());
  }
  // In id order, as one process holds a model's bodies: the same picture.
  std::sort(bodies.begin(), bodies.end(),
            [](const DrawnBody& l, const DrawnBody& r) { return l.id < r.id; });
  drawn.reserve(bodies.size());
  for (const DrawnBody& b : bodies)
    drawn.add(Body{{b.x, b.y, b.z}, {b.vx, b.vy, b.vz}, b.mass, b.radius, b.id});
  return drawn;
}

}  // namespace nbody::cli
