// Collision model names, option checks, the handler factory, and the public contact
// search (find_contact_pairs) for tests and tools.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "collisions/collisions_cuda.hpp"
#include "collisions/contact_search.hpp"
#include "collisions/grid_collision_handler.hpp"
#include "nbody/collisions.hpp"
#include "nbody/error.hpp"
#include "nbody/input_error.hpp"

namespace nbody {

std::string_view to_string(CollisionModel m) {
  switch (m) {
    case CollisionModel::Bounce:
      return "bounce";
    case CollisionModel::Merge:
      return "merge";
    default:
      return "none";
  }
}

std::vector<std::string> collision_model_names() {
  return {"none", "bounce", "merge"};
}

CollisionModel parse_collision_model(std::string_view name) {
  if (name == "none") return CollisionModel::None;
  if (name == "bounce") return CollisionModel::Bounce;
  if (name == "merge") return CollisionModel::Merge;
  throw input_error("--collisions", "unknown collision model (available: none, bounce, merge)",
                    name);
}

void validate(const CollisionOptions& o) {
  if (!(o.restitution >= 0 && o.restitution <= 1)) {
    throw input_error("--restitution", "must be between 0 and 1", o.restitution);
  }
  if (o.iterations < 1)
    throw input_error("--collision-iterations", "must be at least 1", o.iterations);
  if (o.dim != 2 && o.dim != 3) throw input_error("--dim", "must be 2 or 3", o.dim);
  if (o.threads < 0) throw input_error("--threads", "must be >= 0", o.threads);
  if (!std::isfinite(o.G) || !(o.softening >= 0)) {
    throw Error(fmt::format("collisions: G = {} and softening = {} must be finite, softening >= 0",
                            o.G, o.softening));
  }
}

std::unique_ptr<CollisionHandler> make_collision_handler(const CollisionOptions& options) {
  validate(options);
  if (options.model == CollisionModel::None) return nullptr;
  if (options.device == Device::Gpu) return collisions::make_gpu_collision_handler(options);
  return collisions::make_grid_collision_handler(options);
}

std::vector<IndexPair> find_contact_pairs(const ParticleSystem& ps, double skin, int threads,
                                          Device device, CollisionSearch search) {
  if (!(skin >= 0) || !std::isfinite(skin))
    throw Error(fmt::format("find_contact_pairs: skin {} must be >= 0", skin));
  if (device == Device::Gpu) return collisions::find_contact_pairs_gpu(ps, skin, search);
  collisions::ContactSearch grid(search);
  grid.build(ps, ps.dim, skin, threads);
  std::vector<CollisionBody<double>> bodies;
  collisions::gather_bodies(ps, grid.order(), threads, bodies);
  std::vector<collisions::CandidatePair> found;
  grid.find_pairs(bodies.data(), found);
  std::vector<IndexPair> pairs;
  pairs.reserve(found.size());
  for (const auto& f : found) {
    const std::size_t i = grid.order()[f.a], j = grid.order()[f.b];
    pairs.push_back({std::min(i, j), std::max(i, j)});
  }
  std::sort(pairs.begin(), pairs.end(), [](const IndexPair& l, const IndexPair& r) {
    return l.a != r.a ? l.a < r.a : l.b < r.b;
  });
  return pairs;
}

}  // namespace nbody
