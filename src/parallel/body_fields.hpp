#pragma once
// The per-body doubles of a ParticleSystem in the order the domain decomposition's records
// carry them (migration.cpp, domain_state.cpp): one list, so that a field added to bodies is
// added to every record. The potential is last: a state may hold none.
#include <array>

#include "nbody/particles.hpp"

namespace nbody::parallel {

inline constexpr int kBodyDoubles = 12;

template <class System>  // ParticleSystem or const ParticleSystem
auto body_fields(System& ps) {
  return std::array{&ps.x,  &ps.y,  &ps.z,  &ps.vx,   &ps.vy,     &ps.vz,
                    &ps.ax, &ps.ay, &ps.az, &ps.mass, &ps.radius, &ps.potential};
}

}  // namespace nbody::parallel
