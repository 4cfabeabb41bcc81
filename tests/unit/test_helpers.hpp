#pragma once
// Shared test fixtures: seeded random systems, error measures and state comparisons.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "nbody/error.hpp"
#include "nbody/particles.hpp"

namespace nbody::test {

/// A test with its own empty folder dir_ (<tmp>/nbody_<prefix>_<test>_<pid>), removed
/// afterwards, so tests never see each other's files (and can run in parallel under ctest).
class FolderTest : public ::testing::Test {
 protected:
  explicit FolderTest(std::string prefix) : prefix_(std::move(prefix)) {}
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           ("nbody_" + prefix_ + "_" + info->name() + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }

  /// A file of this test's folder.
  [[nodiscard]] std::filesystem::path file(const std::string& name) const { return dir_ / name; }

  std::filesystem::path dir_;

 private:
  std::string prefix_;
};

/// A star of mass 1 at rest and five planets of mass 1e-4 on circular orbits in the plane
/// z = 0 at r = 0.3 ... 4.8 (periods 1 ... 66), G = 1.
inline ParticleSystem star_and_planets() {
  ParticleSystem ps;
  ps.add(Body{{0, 0, 0}, {0, 0, 0}, 1.0, 0, 0});
  double r = 0.3;
  for (int k = 0; k < 5; ++k, r *= 2) {
    const double v = std::sqrt(1.0 / r), phase = 1.3 * k;
    ps.add(Body{{r * std::cos(phase), r * std::sin(phase), 0},
                {-v * std::sin(phase), v * std::cos(phase), 0},
                1e-4,
                0,
                std::uint64_t(k + 1)});
  }
  return ps;
}

/// n bodies uniform in [-1,1]^3, velocities uniform in [-0.1,0.1]^3, masses in [0.5,1.5]/n.
inline ParticleSystem random_system(std::size_t n, std::uint64_t seed, int dim = 3) {
  std::mt19937_64 rng(seed);
  auto u = [&](double lo, double hi) { return lo + (hi - lo) * double(rng() >> 11) * 0x1.0p-53; };
  ParticleSystem ps;
  ps.dim = dim;
  ps.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    ps.x[i] = u(-1, 1);
    ps.y[i] = u(-1, 1);
    ps.z[i] = dim == 3 ? u(-1, 1) : 0.0;
    ps.vx[i] = u(-0.1, 0.1);
    ps.vy[i] = u(-0.1, 0.1);
    ps.vz[i] = dim == 3 ? u(-0.1, 0.1) : 0.0;
    ps.mass[i] = u(0.5, 1.5) / double(n);
  }
  ps.assign_sequential_ids();
  return ps;
}

/// Norm-wise relative difference of two acceleration fields: ||a - b|| / ||b||
/// over all bodies (the measure GADGET's force tests use).
inline double relative_acceleration_error(const ParticleSystem& a, const ParticleSystem& b) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double dx = a.ax[i] - b.ax[i], dy = a.ay[i] - b.ay[i], dz = a.az[i] - b.az[i];
    num += dx * dx + dy * dy + dz * dz;
    den += b.ax[i] * b.ax[i] + b.ay[i] * b.ay[i] + b.az[i] * b.az[i];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

/// Largest per-body error relative to the rms acceleration: catches a single wrong body
/// that a norm-wise measure would average away.
inline double max_error_over_rms(const ParticleSystem& a, const ParticleSystem& b) {
  double worst = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double dx = a.ax[i] - b.ax[i], dy = a.ay[i] - b.ay[i], dz = a.az[i] - b.az[i];
    worst = std::max(worst, std::sqrt(dx * dx + dy * dy + dz * dz));
    den += b.ax[i] * b.ax[i] + b.ay[i] * b.ay[i] + b.az[i] * b.az[i];
  }
  const double rms = a.size() ? std::sqrt(den / double(a.size())) : 0.0;
  return rms > 0 ? worst / rms : worst;
}

/// Every position, velocity and acceleration bit for bit, and the time; on failure, how many
/// entries differ and by how much at most.
inline void expect_same_state(const ParticleSystem& a, const ParticleSystem& b,
                              const std::string& what) {
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

/// Values that a careless writer loses: tiny, subnormal, huge, not exact in binary,
/// negative zero (the file-format round-trip tests put them in positions and velocities).
inline constexpr double kAwkwardValues[] = {
    1e-300,  -0.1,     1.0 / 3.0, -0.0, 4.9406564584124654e-324, std::numeric_limits<double>::max(),
    -2.5e17, 0.1 + 0.2};

/// The message of the nbody::Error that f throws ("" when it throws none).
template <class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

/// The nbody::Error message of `call` (fails the test when it throws none).
inline std::string error_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no nbody::Error thrown";
  return {};
}

}  // namespace nbody::test
