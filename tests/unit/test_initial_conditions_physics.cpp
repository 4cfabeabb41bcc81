// Initial-condition generators: the physics each model promises (Plummer virial equilibrium
// and mass profile, the cusped spheres' profiles, Kepler energy, figure-eight invariants, ...).
// Energies are computed here with a plain O(N^2) loop so these tests stand on their own.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <string>
#include <utility>
#include <vector>

#include "nbody/error.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/particles.hpp"

namespace nbody {
namespace {

// {T, W}: kinetic and potential energy, plain pair sum, no softening.
std::pair<double, double> energies(const ParticleSystem& ps, double G) {
  double t = 0, w = 0;
  for (std::size_t i = 0; i < ps.size(); ++i) {
    t += 0.5 * ps.mass[i] * (ps.vx[i] * ps.vx[i] + ps.vy[i] * ps.vy[i] + ps.vz[i] * ps.vz[i]);
    for (std::size_t j = i + 1; j < ps.size(); ++j) {
      const double dx = ps.x[j] - ps.x[i], dy = ps.y[j] - ps.y[i], dz = ps.z[j] - ps.z[i];
      w -= G * ps.mass[i] * ps.mass[j] / std::sqrt(dx * dx + dy * dy + dz * dz);
    }
  }
  return {t, w};
}

// {mass, sum m x, sum m y, sum m z, sum m vx, sum m vy, sum m vz} of bodies [begin, end).
std::array<double, 7> moments(const ParticleSystem& ps, std::size_t begin, std::size_t end) {
  std::array<double, 7> m{};
  for (std::size_t i = begin; i < end; ++i) {
    const double mi = ps.mass[i];
    m[0] += mi;
    m[1] += mi * ps.x[i], m[2] += mi * ps.y[i], m[3] += mi * ps.z[i];
    m[4] += mi * ps.vx[i], m[5] += mi * ps.vy[i], m[6] += mi * ps.vz[i];
  }
  return m;
}

// Total mass as given, centre of mass at the origin and zero momentum.
void expect_mass_and_com_frame(const ParticleSystem& ps, double mass, double tol) {
  const auto m = moments(ps, 0, ps.size());
  EXPECT_NEAR(m[0], mass, tol);
  for (std::size_t k = 1; k < 7; ++k) EXPECT_NEAR(m[k], 0.0, tol) << "component " << k;
}

TEST(InitialConditions, GiantsAreThePlanetsAndTestParticlesOnCircles) {
  const ParticleSystem ps = generate({.model = "giants", .n = 1005, .seed = 4});
  ASSERT_EQ(ps.active_count(), 5u);
  EXPECT_EQ(ps.mass[0], 1.0);
  for (std::size_t i = 1; i < ps.size(); ++i) {
    const double r = std::hypot(ps.x[i], ps.y[i]);
    const double v = std::hypot(ps.vx[i], ps.vy[i], ps.vz[i]);
    EXPECT_NEAR(v * v * r, 1.0, 1e-12) << i;  // circular about the Sun, G = 1
    if (i >= 5) {
      EXPECT_GE(r, 1.0);
      EXPECT_LE(r, 40.0);
      EXPECT_LE(std::abs(ps.z[i]), 0.01 * r + 1e-15);
    }
  }
  EXPECT_THROW((void)generate({.model = "giants", .n = 4}), Error);
}

TEST(InitialConditions, PlummerIsInVirialEquilibriumInHenonUnits) {
  const ParticleSystem ps = generate({.model = "plummer", .n = 10000, .seed = 1});
  const auto [t, w] = energies(ps, 1.0);
  EXPECT_NEAR(t + w, -0.25, 0.03 * 0.25);
  EXPECT_NEAR(2 * t / -w, 1.0, 0.03);
  expect_mass_and_com_frame(ps, 1.0, 1e-12);
  std::printf("plummer N=1e4 seed 1: E = %.6f, 2T/|W| = %.6f\n", t + w, 2 * t / -w);
}

TEST(InitialConditions, PlummerHasTheMassProfileOfThePlummerSphere) {
  // M(<r) / M = r^3 / (r^2 + a^2)^(3/2) with a = 3 pi / 16 in Henon units (half-mass
  // radius 0.76857), for the mass fractions X drawn in (0, 0.999]: the radius holding a
  // fraction f of the sample holds f * 0.999 of the full sphere's mass. 10^5 bodies put
  // each quantile within ~0.5 % of that.
  constexpr std::size_t kN = 100000;
  const ParticleSystem ps = generate({.model = "plummer", .n = kN, .seed = 2});
  std::vector<double> r(kN);
  for (std::size_t i = 0; i < kN; ++i) r[i] = std::hypot(ps.x[i], ps.y[i], ps.z[i]);
  std::sort(r.begin(), r.end());
  const double a = 3.0 * std::numbers::pi / 16.0;
  for (double f : {0.1, 0.25, 0.5, 0.75, 0.9}) {
    const double x = f * 0.999;
    const double expected = a / std::sqrt(std::pow(x, -2.0 / 3.0) - 1.0);
    EXPECT_NEAR(r[static_cast<std::size_t>(f * kN)] / expected, 1.0, 0.02) << "fraction " << f;
  }
  // The unclipped sphere's half-mass radius, for the record (reference-values.md).
  EXPECT_NEAR(a / std::sqrt(std::pow(0.5, -2.0 / 3.0) - 1.0), 0.76857, 1e-5);
}

TEST(InitialConditions, PlummerVelocitiesScaleWithSqrtG) {
  const ParticleSystem a = generate({.model = "plummer", .n = 500, .seed = 3});
  const ParticleSystem b = generate({.model = "plummer", .n = 500, .seed = 3, .G = 4.0});
  EXPECT_EQ(a.x, b.x);
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_DOUBLE_EQ(b.vx[i], 2.0 * a.vx[i]);
  const auto [ta, wa] = energies(a, 1.0);
  const auto [tb, wb] = energies(b, 4.0);
  EXPECT_NEAR(tb / wb, ta / wa, 1e-12);  // same virial ratio
}

// ---- The cusped spheres (hernquist, nfw): mass profile, virial ratio, frame. -------

// The fraction of the bodies within r of the origin (the centre of mass).
double fraction_within(const ParticleSystem& ps, double r) {
  std::size_t inside = 0;
  for (std::size_t i = 0; i < ps.size(); ++i) inside += std::hypot(ps.x[i], ps.y[i], ps.z[i]) < r;
  return static_cast<double>(inside) / static_cast<double>(ps.size());
}

// Checks the fraction within each radius against the model's cumulative mass: within 4
// sigma of the binomial noise sqrt(p (1 - p) / N).
template <class Mass>
void expect_mass_profile(const ParticleSystem& ps, const std::vector<double>& radii,
                         const Mass& expected_fraction) {
  const double n = static_cast<double>(ps.size());
  for (double r : radii) {
    const double p = expected_fraction(r), got = fraction_within(ps, r);
    const double sigma = std::sqrt(p * (1 - p) / n);
    EXPECT_NEAR(got, p, 4 * sigma) << "r = " << r;
    std::printf("  M(<%g): sample %.5f, model %.5f (%+.2f sigma)\n", r, got, p, (got - p) / sigma);
  }
}

// M(<r) / M of the Hernquist sphere (a = 1) truncated at r_max.
double hernquist_fraction(double r, double r_max) {
  const double m = r * r / ((1 + r) * (1 + r));
  return std::min(1.0, m / (r_max * r_max / ((1 + r_max) * (1 + r_max))));
}

// M(<r) / M of the NFW halo (r_s = 1) truncated at c.
double nfw_fraction(double r, double c) {
  const auto mu = [](double x) { return std::log1p(x) - x / (1 + x); };
  return std::min(1.0, mu(r) / mu(c));
}

TEST(InitialConditions, HernquistHasTheTruncatedMassProfile) {
  const ParticleSystem ps = generate({.model = "hernquist", .n = 20000, .seed = 4});
  expect_mass_and_com_frame(ps, 1.0, 1e-12);
  std::printf("hernquist N=2e4 seed 4 (r_max = 100):\n");
  expect_mass_profile(ps, {1.0, 2.0, 10.0}, [](double r) { return hernquist_fraction(r, 100); });
  // The half-mass radius of the truncated sphere: sqrt(u) = sqrt(0.5 M(<100)) -> r.
  std::vector<double> r(ps.size());
  for (std::size_t i = 0; i < ps.size(); ++i) r[i] = std::hypot(ps.x[i], ps.y[i], ps.z[i]);
  std::nth_element(r.begin(), r.begin() + 10000, r.end());
  const double s = std::sqrt(0.5) * 100.0 / 101.0;
  EXPECT_NEAR(r[10000] / (s / (1 - s)), 1.0, 0.05);
}

TEST(InitialConditions, HernquistRmaxTruncatesTheSphere) {
  const ParticleSystem ps = generate({.model = "hernquist", .n = 20000, .seed = 8, .rmax = 10});
  expect_mass_and_com_frame(ps, 1.0, 1e-12);
  std::printf("hernquist N=2e4 seed 8, r_max = 10:\n");
  expect_mass_profile(ps, {0.5, 1.0, 2.0}, [](double r) { return hernquist_fraction(r, 10); });
  // Nothing beyond r_max, but for the shift to the centre of mass (~1e-2 here).
  EXPECT_EQ(fraction_within(ps, 10.1), 1.0);
}

TEST(InitialConditions, NfwHasTheTruncatedMassProfile) {
  for (double c : {10.0, 4.0}) {
    const ParticleSystem ps = generate({.model = "nfw", .n = 20000, .seed = 6, .concentration = c});
    expect_mass_and_com_frame(ps, 1.0, 1e-12);
    std::printf("nfw N=2e4 seed 6, c = %g:\n", c);
    // (At 10 r_s = r_200 the fraction is 1 by construction; 5 r_s is the outer check.)
    const std::vector<double> radii =
        c == 10.0 ? std::vector<double>{1.0, 2.0, 5.0} : std::vector<double>{0.5, 1.0, 2.0};
    expect_mass_profile(ps, radii, [c](double r) { return nfw_fraction(r, c); });
    EXPECT_EQ(fraction_within(ps, 1.01 * c), 1.0);
  }
}

TEST(InitialConditions, CuspedSpheresAreNearVirialEquilibrium) {
  // 2T / |W| with the exact pair sum. Hernquist: the infinite sphere's velocities, the
  // truncated sphere's positions (0.981 for r_max = 100); NFW: the Jeans dispersion of the
  // truncated halo, matched through the 0.95 v_esc cut (1). N = 5000 adds ~0.01 of noise.
  for (const char* model : {"hernquist", "nfw"}) {
    for (double G : {1.0, 3.0}) {
      const ParticleSystem ps = generate({.model = model, .n = 5000, .seed = 3, .G = G});
      const auto [t, w] = energies(ps, G);
      EXPECT_NEAR(2 * t / -w, 1.0, 0.1) << model << " G = " << G;
      std::printf("%s N=5000 seed 3 G=%g: T = %.5f, W = %.5f, 2T/|W| = %.4f\n", model, G, t, w,
                  2 * t / -w);
    }
  }
}

TEST(InitialConditions, CuspedSpheresScaleWithSqrtGAndKeepTheirSpeedsBound) {
  for (const char* model : {"hernquist", "nfw"}) {
    SCOPED_TRACE(model);
    const ParticleSystem a = generate({.model = model, .n = 2000, .seed = 3});
    const ParticleSystem b = generate({.model = model, .n = 2000, .seed = 3, .G = 4.0});
    EXPECT_EQ(a.x, b.x);
    for (std::size_t i = 0; i < a.size(); ++i) EXPECT_DOUBLE_EQ(b.vx[i], 2.0 * a.vx[i]);
    // Bound to the sphere: below the escape speed (Hernquist: that of the infinite
    // sphere; NFW: 0.95 of that of the truncated halo), up to the centre-of-mass shift.
    const double c = 10.0, mu_c = std::log1p(c) - c / (1 + c);
    for (std::size_t i = 0; i < a.size(); ++i) {
      const double r = std::hypot(a.x[i], a.y[i], a.z[i]);
      const double v = std::hypot(a.vx[i], a.vy[i], a.vz[i]);
      const double v_esc = std::string(model) == "hernquist"
                               ? std::sqrt(2 / (1 + r))
                               : std::sqrt(2 * (std::log1p(r) / r - 1 / (1 + c)) / mu_c);
      EXPECT_LT(v, 1.02 * v_esc + 0.02) << "body " << i;
    }
  }
}

TEST(InitialConditions, KeplerStartsAtPericentreWithTheOrbitEnergy) {
  for (double G : {1.0, 2.5}) {
    const ParticleSystem ps = generate({.model = "kepler", .G = G, .e = 0.3, .a = 2.0});
    ASSERT_EQ(ps.size(), 2u);
    const auto [t, w] = energies(ps, G);
    EXPECT_NEAR(t + w, -G * 0.5 * 0.5 / (2.0 * 2.0), 1e-12);
    EXPECT_NEAR(std::hypot(ps.x[1] - ps.x[0], ps.y[1] - ps.y[0]), 2.0 * (1.0 - 0.3), 1e-12);
    expect_mass_and_com_frame(ps, 1.0, 1e-15);
    // At pericentre the relative velocity is perpendicular to the separation.
    EXPECT_EQ((ps.x[1] - ps.x[0]) * (ps.vx[1] - ps.vx[0]), 0.0);
  }
}

TEST(InitialConditions, FigureEightHasThePublishedEnergyAndNoAngularMomentum) {
  const ParticleSystem ps = generate({.model = "figure-eight"});
  ASSERT_EQ(ps.size(), 3u);
  const auto [t, w] = energies(ps, 1.0);
  EXPECT_NEAR(t + w, -1.2871419918, 1e-8);
  double lz = 0;
  for (std::size_t i = 0; i < 3; ++i) lz += ps.mass[i] * (ps.x[i] * ps.vy[i] - ps.y[i] * ps.vx[i]);
  EXPECT_NEAR(lz, 0.0, 1e-12);
  expect_mass_and_com_frame(ps, 3.0, 1e-12);
}

TEST(InitialConditions, UniformModelsStayInsideTheirVolume) {
  ModelOptions o{.model = "uniform-cube", .n = 1000, .mass = 5.0, .size = 3.0, .velocity = 0.2};
  const ParticleSystem cube = generate(o);
  for (std::size_t i = 0; i < cube.size(); ++i) {
    for (double v : {cube.x[i], cube.y[i], cube.z[i]}) EXPECT_LE(std::fabs(v), 3.0);
    for (double v : {cube.vx[i], cube.vy[i], cube.vz[i]}) EXPECT_LE(std::fabs(v), 0.2);
  }
  EXPECT_NEAR(moments(cube, 0, cube.size())[0], 5.0, 1e-12);
  for (const char* model : {"uniform-sphere", "cold-sphere"}) {
    o.model = model;  // cold-sphere ignores --velocity: it starts at rest
    const ParticleSystem ball = generate(o);
    EXPECT_NEAR(moments(ball, 0, ball.size())[0], 5.0, 1e-12);
    for (std::size_t i = 0; i < ball.size(); ++i) {
      EXPECT_LE(std::hypot(ball.x[i], ball.y[i], ball.z[i]), 3.0 * (1 + 1e-15));
      if (o.model == "cold-sphere") {
        EXPECT_TRUE(ball.vx[i] == 0.0 && ball.vy[i] == 0.0 && ball.vz[i] == 0.0);
        EXPECT_FALSE(std::signbit(ball.vx[i]));  // +0, not -0 (files would say "-0")
      }
    }
  }
}

TEST(InitialConditions, DiskRotatesOneWayAroundTheCentralMass) {
  const ModelOptions o{
      .model = "disk", .n = 4001, .seed = 5, .G = 2.0, .disk_mass = 0.2, .scale_length = 1.5};
  const ParticleSystem ps = generate(o);
  EXPECT_EQ(ps.mass[0], 1.0);
  expect_mass_and_com_frame(ps, 1.2, 1e-12);
  std::vector<double> radii;
  for (std::size_t i = 0; i < ps.size(); ++i) {
    EXPECT_TRUE(ps.z[i] == 0.0 && ps.vz[i] == 0.0);
    if (i == 0) continue;
    // Relative to the central body (the centre-of-mass shift moves it slightly).
    const double dx = ps.x[i] - ps.x[0], dy = ps.y[i] - ps.y[0];
    const double dvx = ps.vx[i] - ps.vx[0], dvy = ps.vy[i] - ps.vy[0];
    const double r = std::hypot(dx, dy), s = r / o.scale_length;
    EXPECT_GT(dx * dvy - dy * dvx, 0.0) << "body " << i;
    // Circular speed from the enclosed mass 1 + Md (1 - (1 + s) e^-s), s = R / Rd.
    const double enclosed = 1.0 + o.disk_mass * (1.0 - (1.0 + s) * std::exp(-s));
    EXPECT_NEAR((dvx * dvx + dvy * dvy) * r / (o.G * enclosed), 1.0, 1e-9) << "body " << i;
    radii.push_back(r);
  }
  // Half the disk mass lies inside s = 1.67835 (1 - (1 + s) e^-s = 1/2).
  std::nth_element(radii.begin(), radii.begin() + 2000, radii.end());
  EXPECT_NEAR(radii[2000] / o.scale_length, 1.67835, 0.05 * 1.67835);
}

TEST(InitialConditions, TwoClustersApproachOnAParabolicOrbit) {
  const ParticleSystem ps =
      generate({.model = "two-clusters", .n = 2001, .seed = 11, .separation = 8, .impact = 2});
  expect_mass_and_com_frame(ps, 1.0, 1e-12);
  const auto a = moments(ps, 0, 1000), b = moments(ps, 1000, ps.size());
  EXPECT_NEAR(a[0], 0.5, 1e-12);
  EXPECT_NEAR(b[0], 0.5, 1e-12);
  const double rx = b[1] / b[0] - a[1] / a[0], ry = b[2] / b[0] - a[2] / a[0];
  const double vx = b[4] / b[0] - a[4] / a[0], vy = b[5] / b[0] - a[5] / a[0];
  EXPECT_NEAR(rx, 8.0, 1e-12);
  EXPECT_NEAR(ry, 2.0, 1e-12);
  EXPECT_LT(rx * vx + ry * vy, 0.0);  // approaching
  // Parabolic: the centres' orbital energy mu v^2 / 2 - G m1 m2 / d is zero.
  EXPECT_NEAR(0.5 * 0.25 * (vx * vx + vy * vy) - 0.25 / std::hypot(rx, ry), 0.0, 1e-12);
}

}  // namespace
}  // namespace nbody
