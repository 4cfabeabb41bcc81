#pragma once
// The checkpoint's layout (checkpoint_format.cpp writes it, checkpoint_read.cpp reads it).
// Version 2: positions and velocities once, as the snapshot view's N x 3 float64
// /PartType1/Coordinates and Velocities; /Checkpoint holds the other float64 arrays of a
// ParticleSystem under these names (the radii only when a body has one), the ids as "id",
// and the scalars as attributes. 88 bytes a body (96 with radii; 8 more for a decomposed CPU
// run's costs, kDomainCost), where version 1 (still
// read) also kept x y z vx vy vz and the radii under /Checkpoint: 144 bytes, so that a
// 2^30-body checkpoint (155 GB) would not fit the 128 GB disk of a 2-GPU host (95 GB now).
#include <array>
#include <cstdint>
#include <vector>

#include "nbody/particles.hpp"

namespace nbody::checkpoint_layout {

inline constexpr std::int32_t kFormatVersion = 2;
inline constexpr const char* kGroup = "Checkpoint";

/// The float64 arrays of a ParticleSystem and their dataset names under /Checkpoint (version
/// 1: all of them; version 2: from ax on, the first six being the view's columns).
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
/// Version 2: kArrays[k] for k < kViewed are column k % 3 of the view's dataset kViewName[k / 3].
inline constexpr std::size_t kViewed = 6;

/// A decomposed run's ranks, written by write_checkpoint_share: the rows each rank wrote (in
/// rank order; every decomposed run), and on CPU ranks (DecompositionState) the cuts of the
/// key line and their level and every body's cost. Read back by a restart on as many ranks
/// (each its own rows, the cuts), the costs at any count.
inline constexpr const char* kRankRows = "rank_rows";
inline constexpr const char* kDomainCuts = "domain_cuts";
inline constexpr const char* kDomainCutLevel = "domain_cut_level";
inline constexpr const char* kDomainCost = "cost";
inline constexpr const char* kViewName[2] = {"Coordinates", "Velocities"};

/// Test particles (ParticleSystem::n_active, test_particle_type), /Checkpoint attributes:
/// NumActive (uint64, the active bodies, the first ones; absent: every body is active) and
/// TestParticleType (0 or 1; absent, as before test particles: 0). The snapshot view holds
/// every body in PartType1 (test particles too: their positions are stored there).
inline constexpr const char* kNumActive = "NumActive";
inline constexpr const char* kTestParticleType = "TestParticleType";

}  // namespace nbody::checkpoint_layout
