// The pair interaction and the scalar reference against hand-computed values.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <utility>

#include "gravity/direct_scalar.hpp"
#include "nbody/build_info.hpp"
#include "nbody/error.hpp"
#include "nbody/physics/multipole.hpp"
#include "nbody/physics/pair_force.hpp"

namespace nbody {
namespace {

TEST(PairForce, InverseSquareWithoutSoftening) {
  double ax = 0, ay = 0, az = 0;
  accumulate_pair_acceleration<double>(2.0, 0.0, 0.0, 3.0, 0.0, ax, ay, az);
  EXPECT_DOUBLE_EQ(ax, 3.0 / 4.0);  // m / r^2 toward the other body
  EXPECT_EQ(ay, 0.0);
  EXPECT_EQ(az, 0.0);
}

TEST(PairForce, PlummerSoftening) {
  double ax = 0, ay = 0, az = 0;
  const double r = 1.5, eps = 0.5, m = 2.0;
  accumulate_pair_acceleration<double>(0.0, -r, 0.0, m, eps * eps, ax, ay, az);
  EXPECT_NEAR(ay, -m * r / std::pow(r * r + eps * eps, 1.5), 1e-15);
  EXPECT_NEAR(pair_potential<double>(0.0, -r, 0.0, m, eps * eps), -m / std::sqrt(r * r + eps * eps),
              1e-15);
}

TEST(PairForce, SelfTermAndCoincidentBodiesContributeNothing) {
  double ax = 0, ay = 0, az = 0;
  accumulate_pair_acceleration<double>(0.0, 0.0, 0.0, 1.0, 0.0, ax, ay, az);
  float fx = 0, fy = 0, fz = 0;
  accumulate_pair_acceleration<float>(0.0f, 0.0f, 0.0f, 1.0f, 0.0f, fx, fy, fz);
  EXPECT_EQ(ax, 0.0);
  EXPECT_EQ(fx, 0.0f);
  EXPECT_FALSE(std::isnan(fy) || std::isnan(fz) || std::isnan(ay) || std::isnan(az));
  EXPECT_EQ(pair_potential<double>(0, 0, 0, 1.0, 0.0), 0.0);
}

TEST(DirectScalar, NewtonsThirdLawAndG) {
  ParticleSystem ps;
  ps.add({{0, 0, 0}, {}, 2.0, 0, 0});
  ps.add({{0, 3, 4}, {}, 5.0, 0, 0});  // distance 5
  const double G = 6.67430e-11;
  DirectSumScalar<double> solver(G, 0.0);
  solver.compute_accelerations(ps);
  EXPECT_NEAR(ps.ay[0], G * 5.0 / 25.0 * 3.0 / 5.0, 1e-25);
  EXPECT_NEAR(ps.az[0], G * 5.0 / 25.0 * 4.0 / 5.0, 1e-25);
  // m1 a1 = -m2 a2
  EXPECT_NEAR(2.0 * ps.ay[0], -5.0 * ps.ay[1], 1e-25);
  EXPECT_NEAR(2.0 * ps.az[0], -5.0 * ps.az[1], 1e-25);
  EXPECT_TRUE(ps.accelerations_valid());
}

TEST(DirectScalar, SingleBodyFeelsNoForce) {
  ParticleSystem ps;
  ps.add({{1, 2, 3}, {}, 1.0, 0, 0});
  DirectSumScalar<float> solver(1.0, 0.0);
  solver.compute_accelerations(ps);
  EXPECT_EQ(ps.ax[0], 0.0);
  EXPECT_EQ(ps.ay[0], 0.0);
  EXPECT_EQ(ps.az[0], 0.0);
}

TEST(PairForce, MutualPairEqualsTwoOneSidedPairs) {
  // The each-pair-once form gives body i exactly what the one-sided form gives it and body
  // j the opposite pull scaled by m_i: Newton's third law, to rounding.
  const double xi[3] = {0.1, -0.2, 0.3}, xj[3] = {-0.4, 0.5, 0.25};
  const double mi = 0.7, mj = 1.9, eps2 = 1e-4;
  const double dx = xj[0] - xi[0], dy = xj[1] - xi[1], dz = xj[2] - xi[2];
  double ai[3] = {0, 0, 0}, aj[3] = {0, 0, 0}, ri[3] = {0, 0, 0}, rj[3] = {0, 0, 0};
  accumulate_mutual_pair_acceleration(dx, dy, dz, mi, mj, eps2, ai[0], ai[1], ai[2], aj[0], aj[1],
                                      aj[2]);
  accumulate_pair_acceleration(dx, dy, dz, mj, eps2, ri[0], ri[1], ri[2]);
  accumulate_pair_acceleration(-dx, -dy, -dz, mi, eps2, rj[0], rj[1], rj[2]);
  for (int c = 0; c < 3; ++c) {
    EXPECT_NEAR(ai[c], ri[c], 1e-15 * std::abs(ri[c]) + 1e-300);
    EXPECT_NEAR(aj[c], rj[c], 1e-15 * std::abs(rj[c]) + 1e-300);
    EXPECT_NEAR(mi * ai[c] + mj * aj[c], 0.0, 1e-15 * mi * std::abs(ai[c]));
  }
  // Coincident bodies without softening: zero, not NaN.
  double z[6] = {0, 0, 0, 0, 0, 0};
  accumulate_mutual_pair_acceleration(0.0, 0.0, 0.0, mi, mj, 0.0, z[0], z[1], z[2], z[3], z[4],
                                      z[5]);
  for (double v : z) EXPECT_EQ(v, 0.0);
}

// The tree walks' fused cell term is the pair force plus the quadrupole term, and with
// them it is the far field of the cell's softened bodies to third order in size /
// distance, also where the softening is as large as the cell (the trace term of
// multipole.hpp: without it, eps = 1 made the error at distance 2 six times larger).
TEST(CellTerm, IsMonopolePlusQuadrupoleAndTheSoftenedBodiesFarField) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-0.5, 0.5);
  constexpr int kBodies = 12;
  double x[kBodies], y[kBodies], z[kBodies], m[kBodies];
  double mass = 0, cx = 0, cy = 0, cz = 0;
  for (int k = 0; k < kBodies; ++k) {
    x[k] = u(rng), y[k] = u(rng), z[k] = u(rng), m[k] = 1.0 + u(rng);
    mass += m[k], cx += m[k] * x[k], cy += m[k] * y[k], cz += m[k] * z[k];
  }
  cx /= mass, cy /= mass, cz /= mass;
  Quadrupole<double> q;
  for (int k = 0; k < kBodies; ++k) add_point_quadrupole(q, m[k], x[k] - cx, y[k] - cy, z[k] - cz);
  // The cell term's error relative to the pull, and the monopole's.
  auto errors = [&](double distance, double eps2) {
    const double tx = cx + distance * 0.6, ty = cy - distance * 0.64, tz = cz + distance * 0.48;
    double fx = 0, fy = 0, fz = 0, fphi = 0;  // fused
    accumulate_cell_acceleration_potential<double>(cx - tx, cy - ty, cz - tz, mass, q, eps2, fx, fy,
                                                   fz, fphi);
    double sx = 0, sy = 0, sz = 0, sphi = 0;  // separate
    accumulate_pair_acceleration_potential<double>(cx - tx, cy - ty, cz - tz, mass, eps2, sx, sy,
                                                   sz, sphi);
    const double mx = sx, my = sy, mz = sz, pull = std::hypot(sx, sy, sz);
    accumulate_quadrupole_acceleration_potential<double>(cx - tx, cy - ty, cz - tz, q, eps2, sx, sy,
                                                         sz, sphi);
    EXPECT_NEAR(fx, sx, 1e-14 * pull);
    EXPECT_NEAR(fy, sy, 1e-14 * pull);
    EXPECT_NEAR(fz, sz, 1e-14 * pull);
    EXPECT_NEAR(fphi, sphi, 1e-14 * std::abs(sphi));
    double ex = 0, ey = 0, ez = 0;  // the bodies themselves
    for (int k = 0; k < kBodies; ++k)
      accumulate_pair_acceleration<double>(x[k] - tx, y[k] - ty, z[k] - tz, m[k], eps2, ex, ey, ez);
    return std::pair{std::hypot(fx - ex, fy - ey, fz - ez) / pull,
                     std::hypot(mx - ex, my - ey, mz - ez) / pull};
  };
  for (const double distance : {2.0, 4.0, 8.0, 16.0}) {
    const auto [cell, monopole] = errors(distance, 1e-4);
    // The monopole's error is O((s/d)^2) of the pull, the quadrupole's O((s/d)^3).
    EXPECT_LT(cell, 0.25 * monopole) << "distance " << distance;
    EXPECT_LT(cell, 2.0 * std::pow(1.0 / distance, 3)) << "distance " << distance;
    // Softening as large as the cell smooths the field: no larger an error.
    const auto [soft_cell, soft_monopole] = errors(distance, 1.0);
    EXPECT_LT(soft_cell, 1.05 * cell) << "distance " << distance;
  }
}

TEST(GravityFactory, RejectsUnknownChoicesWithTheOptionName) {
  try {
    (void)parse_gravity_algorithm("fmm");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "--gravity: unknown gravity solver (available: direct, tree, none) (got fmm)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW((void)parse_force_kernel("magic"), Error);
  GravityOptions o;
  o.algorithm = GravityAlgorithm::Direct;
  o.kernel = ForceKernel::Tiled;  // a GPU kernel on the CPU
  try {
    (void)make_gravity_solver(o);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "--kernel: GPU only (--device gpu); CPU kernels: fast, scalar (got tiled)");
  }
  o.kernel = ForceKernel::Scalar;  // the reference is CPU-only: an error with or without a GPU
  o.device = Device::Gpu;
  try {
    (void)make_gravity_solver(o);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "--kernel: CPU only; GPU kernels: naive, tiled, fast (got scalar)");
  }
  if (!build_info().cuda) {
    o.kernel = ForceKernel::Fast;  // a build without CUDA refuses every GPU solver
    EXPECT_THROW((void)make_gravity_solver(o), Error);
  }
}

}  // namespace
}  // namespace nbody
