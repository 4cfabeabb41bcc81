#include "nbody/particles.hpp"

#include <algorithm>

namespace nbody {

void ParticleSystem::resize(std::size_t n) {
  for (auto* v : {&x, &y, &z, &vx, &vy, &vz, &ax, &ay, &az, &mass, &radius}) v->resize(n, 0.0);
  id.resize(n, 0);
  accelerations_valid_ = false;
}

void ParticleSystem::reserve(std::size_t n) {
  for (auto* v : {&x, &y, &z, &vx, &vy, &vz, &ax, &ay, &az, &mass, &radius}) v->reserve(n);
  id.reserve(n);
}

void ParticleSystem::clear() {
  resize(0);
  next_id_ = 1;
}

void ParticleSystem::assign_sequential_ids() {
  for (std::size_t i = 0; i < id.size(); ++i) id[i] = i + 1;
  next_id_ = id.size() + 1;
}

void ParticleSystem::add(const Body& b) {
  if (next_id_ <= size()) {  // ids were set directly through the arrays: rescan once
    for (std::uint64_t v : id) next_id_ = std::max(next_id_, v + 1);
  }
  const std::uint64_t new_id = b.id != 0 ? b.id : next_id_;
  next_id_ = std::max(next_id_, new_id + 1);
  x.push_back(b.position.x);
  y.push_back(b.position.y);
  z.push_back(dim == 2 ? 0.0 : b.position.z);
  vx.push_back(b.velocity.x);
  vy.push_back(b.velocity.y);
  vz.push_back(dim == 2 ? 0.0 : b.velocity.z);
  ax.push_back(0.0);
  ay.push_back(0.0);
  az.push_back(0.0);
  mass.push_back(b.mass);
  radius.push_back(b.radius);
  id.push_back(new_id);
  accelerations_valid_ = false;
}

Body ParticleSystem::body(std::size_t i) const {
  return Body{{x[i], y[i], z[i]}, {vx[i], vy[i], vz[i]}, mass[i], radius[i], id[i]};
}

bool ParticleSystem::has_radii() const {
  return std::any_of(radius.begin(), radius.end(), [](double r) { return r != 0.0; });
}

std::size_t ParticleSystem::make_planar() {
  std::size_t changed = 0;
  for (std::size_t i = 0; i < size(); ++i) {
    if (z[i] != 0.0 || vz[i] != 0.0 || az[i] != 0.0) ++changed;
    z[i] = vz[i] = az[i] = 0.0;
  }
  dim = 2;
  return changed;
}

}  // namespace nbody
