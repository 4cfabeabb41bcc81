#pragma once
// Shared by the GPU tests: skip (and say why) when no CUDA device is usable, so a run on
// a machine without a GPU reports the tests as skipped, never as passed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "nbody/build_info.hpp"
#include "nbody/gravity.hpp"
#include "nbody/particles.hpp"

#define SKIP_WITHOUT_GPU()                                                            \
  do {                                                                                \
    std::string reason_;                                                              \
    if (nbody::gpu_devices(&reason_).empty()) GTEST_SKIP() << "no CUDA device: " << reason_; \
  } while (0)

namespace nbody {

/// GPU gravity with softening 0.01, the setting of the GPU tests that step a Plummer sphere.
inline GravityOptions gpu_gravity(GravityAlgorithm algorithm, Precision p, bool deterministic = false) {
  GravityOptions g;
  g.algorithm = algorithm;
  g.device = Device::Gpu;
  g.precision = p;
  g.softening = 0.01;
  g.deterministic = deterministic;
  return g;
}

/// Every array bit for bit; on failure, how many entries differ and by how much at most.
inline void expect_same_state(const ParticleSystem& a, const ParticleSystem& b, const std::string& what) {
  const std::pair<const char*, std::vector<double> ParticleSystem::*> arrays[] = {
      {"x", &ParticleSystem::x},   {"y", &ParticleSystem::y},   {"z", &ParticleSystem::z},
      {"vx", &ParticleSystem::vx}, {"vy", &ParticleSystem::vy}, {"vz", &ParticleSystem::vz},
      {"ax", &ParticleSystem::ax}, {"ay", &ParticleSystem::ay}, {"az", &ParticleSystem::az}};
  for (const auto& [name, member] : arrays) {
    const std::vector<double>& u = a.*member;
    const std::vector<double>& v = b.*member;
    ASSERT_EQ(u.size(), v.size()) << what << ": " << name;
    std::size_t differ = 0;
    double worst = 0;
    for (std::size_t i = 0; i < u.size(); ++i) {
      if (u[i] != v[i]) {
        ++differ;
        worst = std::max(worst, std::abs(u[i] - v[i]));
      }
    }
    EXPECT_EQ(differ, 0u) << what << ": " << name << " differs in " << differ << " of " << u.size()
                          << " bodies, by up to " << worst;
  }
  EXPECT_EQ(a.time, b.time) << what;
}

}  // namespace nbody
