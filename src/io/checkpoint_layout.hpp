#pragma once
// The checkpoint's layout (checkpoint_format.cpp writes it, checkpoint_read.cpp reads it):
// /Checkpoint holds the float64 arrays of a ParticleSystem under these names, the ids as
// "id", and the scalars as attributes.
#include <array>
#include <cstdint>
#include <vector>

#include "nbody/particles.hpp"

namespace nbody::checkpoint_layout {

inline constexpr std::int32_t kFormatVersion = 1;
inline constexpr const char* kGroup = "Checkpoint";

/// The float64 arrays of a ParticleSystem and their dataset names under /Checkpoint.
struct ArrayField {
  const char* name;
  std::vector<double> ParticleSystem::*member;
};
inline constexpr std::array<ArrayField, 11> kArrays{{{"x", &ParticleSystem::x},
                                                     {"y", &ParticleSystem::y},
                                                     {"z", &ParticleSystem::z},
                                                     {"vx", &ParticleSystem::vx},
                                                     {"vy", &ParticleSystem::vy},
                                                     {"vz", &ParticleSystem::vz},
                                                     {"ax", &ParticleSystem::ax},
                                                     {"ay", &ParticleSystem::ay},
                                                     {"az", &ParticleSystem::az},
                                                     {"mass", &ParticleSystem::mass},
                                                     {"radius", &ParticleSystem::radius}}};

}  // namespace nbody::checkpoint_layout
