// Initial-condition generators: determinism, counts, and the physics each model
// promises (Plummer virial equilibrium, Kepler energy, figure-eight invariants, ...).
// Energies are computed here with a plain O(N^2) loop so these tests stand on their own.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "ic/models.hpp"
#include "ic/random.hpp"
#include "nbody/error.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/particles.hpp"

namespace nbody {
namespace {

struct Energies {
  double kinetic = 0, potential = 0;
  [[nodiscard]] double total() const { return kinetic + potential; }
  [[nodiscard]] double virial_ratio() const { return 2.0 * kinetic / std::fabs(potential); }
};

Energies energies(const ParticleSystem& ps, double G) {
  Energies e;
  for (std::size_t i = 0; i < ps.size(); ++i) {
    e.kinetic += 0.5 * ps.mass[i] * (ps.vx[i] * ps.vx[i] + ps.vy[i] * ps.vy[i] + ps.vz[i] * ps.vz[i]);
    for (std::size_t j = i + 1; j < ps.size(); ++j) {
      const double dx = ps.x[j] - ps.x[i], dy = ps.y[j] - ps.y[i], dz = ps.z[j] - ps.z[i];
      e.potential -= G * ps.mass[i] * ps.mass[j] / std::sqrt(dx * dx + dy * dy + dz * dz);
    }
  }
  return e;
}

// Mass, mass-weighted position sum and momentum of bodies [begin, end).
struct Moments {
  double mass = 0;
  Vec3 mr, mv;
};

Moments moments(const ParticleSystem& ps, std::size_t begin, std::size_t end) {
  Moments m;
  for (std::size_t i = begin; i < end; ++i) {
    m.mass += ps.mass[i];
    m.mr.x += ps.mass[i] * ps.x[i], m.mr.y += ps.mass[i] * ps.y[i], m.mr.z += ps.mass[i] * ps.z[i];
    m.mv.x += ps.mass[i] * ps.vx[i], m.mv.y += ps.mass[i] * ps.vy[i];
    m.mv.z += ps.mass[i] * ps.vz[i];
  }
  return m;
}

ModelOptions options(const std::string& model, std::size_t n = 200, std::uint64_t seed = 1) {
  ModelOptions o;
  o.model = model;
  o.n = n;
  o.seed = seed;
  return o;
}

std::size_t expected_count(const ModelOptions& o) {
  if (o.model == "kepler") return 2;
  if (o.model == "figure-eight") return 3;
  return o.n;
}

bool same_bits(const ParticleSystem& a, const ParticleSystem& b) {
  return a.x == b.x && a.y == b.y && a.z == b.z && a.vx == b.vx && a.vy == b.vy &&
         a.vz == b.vz && a.mass == b.mass && a.radius == b.radius && a.id == b.id;
}

const std::vector<std::string> kRandomModels = {"uniform-cube", "uniform-sphere", "cold-sphere",
                                                "plummer",      "two-clusters",   "disk"};

TEST(InitialConditions, ModelNamesAreTheDocumentedOnes) {
  EXPECT_EQ(model_names(),
            (std::vector<std::string>{"uniform-cube", "uniform-sphere", "cold-sphere", "plummer",
                                      "kepler", "figure-eight", "two-clusters", "disk"}));
}

TEST(InitialConditions, SameSeedIsBitIdenticalDifferentSeedDiffers) {
  for (const std::string& name : kRandomModels) {
    SCOPED_TRACE(name);
    const ParticleSystem a = generate(options(name, 300, 42));
    const ParticleSystem b = generate(options(name, 300, 42));
    const ParticleSystem c = generate(options(name, 300, 43));
    EXPECT_TRUE(same_bits(a, b));
    EXPECT_NE(a.x, c.x);
  }
}

TEST(InitialConditions, UniformCubeIsOurTransformOfRawMersenneTwisterWords) {
  // Pins the seed -> bodies contract to the standard-specified engine output, so it
  // cannot silently change with the standard library.
  ModelOptions o = options("uniform-cube", 5, 9);
  o.size = 2.0;
  o.velocity = 0.5;
  const ParticleSystem ps = generate(o);
  std::mt19937_64 rng(9);
  auto u = [&] { return double(rng() >> 11) * 0x1.0p-53; };
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(ps.x[i], 2.0 * (2.0 * u() - 1.0));
    EXPECT_EQ(ps.y[i], 2.0 * (2.0 * u() - 1.0));
    EXPECT_EQ(ps.z[i], 2.0 * (2.0 * u() - 1.0));
    EXPECT_EQ(ps.vx[i], 0.5 * (2.0 * u() - 1.0));
    EXPECT_EQ(ps.vy[i], 0.5 * (2.0 * u() - 1.0));
    EXPECT_EQ(ps.vz[i], 0.5 * (2.0 * u() - 1.0));
  }
}

TEST(InitialConditions, EveryModelGivesCountFiniteValuesPositiveMassesIdsAndRadii) {
  for (const std::string& name : model_names()) {
    SCOPED_TRACE(name);
    ModelOptions o = options(name, 101);
    o.radius = 0.01;
    const ParticleSystem ps = generate(o);
    ASSERT_EQ(ps.size(), expected_count(o));
    EXPECT_EQ(ps.dim, 3);
    for (std::size_t i = 0; i < ps.size(); ++i) {
      for (double v : {ps.x[i], ps.y[i], ps.z[i], ps.vx[i], ps.vy[i], ps.vz[i]}) {
        ASSERT_TRUE(std::isfinite(v)) << "body " << i;
      }
      EXPECT_GT(ps.mass[i], 0.0);
      EXPECT_EQ(ps.radius[i], 0.01);
      EXPECT_EQ(ps.id[i], i + 1);
    }
  }
}

TEST(InitialConditions, PlummerIsInVirialEquilibriumInHenonUnits) {
  const ParticleSystem ps = generate(options("plummer", 10000, 1));
  const Energies e = energies(ps, 1.0);
  EXPECT_NEAR(e.total(), -0.25, 0.03 * 0.25);
  EXPECT_NEAR(e.virial_ratio(), 1.0, 0.03);
  const Moments m = moments(ps, 0, ps.size());
  EXPECT_NEAR(m.mass, 1.0, 1e-12);
  for (double c : {m.mr.x, m.mr.y, m.mr.z, m.mv.x, m.mv.y, m.mv.z}) EXPECT_NEAR(c, 0.0, 1e-12);
  // Printed so the measured values are on record in the test log.
  std::printf("plummer N=1e4 seed 1: E = %.6f, 2T/|W| = %.6f\n", e.total(), e.virial_ratio());
}

TEST(InitialConditions, PlummerVelocitiesScaleWithSqrtG) {
  ModelOptions o = options("plummer", 500, 3);
  const ParticleSystem a = generate(o);
  o.G = 4.0;
  const ParticleSystem b = generate(o);
  EXPECT_EQ(a.x, b.x);
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_DOUBLE_EQ(b.vx[i], 2.0 * a.vx[i]);
  EXPECT_NEAR(energies(b, 4.0).virial_ratio(), energies(a, 1.0).virial_ratio(), 1e-12);
}

TEST(InitialConditions, KeplerStartsAtPericentreWithTheOrbitEnergy) {
  for (double G : {1.0, 2.5}) {
    ModelOptions o = options("kepler");
    o.G = G;
    o.a = 2.0;
    o.e = 0.3;
    const ParticleSystem ps = generate(o);
    ASSERT_EQ(ps.size(), 2u);
    EXPECT_NEAR(energies(ps, G).total(), -G * 0.5 * 0.5 / (2.0 * o.a), 1e-12);
    EXPECT_NEAR(std::hypot(ps.x[1] - ps.x[0], ps.y[1] - ps.y[0]), o.a * (1.0 - o.e), 1e-12);
    const Moments m = moments(ps, 0, 2);
    EXPECT_NEAR(m.mass, 1.0, 1e-15);
    for (double c : {m.mr.x, m.mr.y, m.mv.x, m.mv.y}) EXPECT_NEAR(c, 0.0, 1e-15);
    // At pericentre the relative velocity is perpendicular to the separation.
    EXPECT_EQ((ps.x[1] - ps.x[0]) * (ps.vx[1] - ps.vx[0]), 0.0);
  }
}

TEST(InitialConditions, FigureEightHasThePublishedEnergyAndNoAngularMomentum) {
  const ParticleSystem ps = generate(options("figure-eight"));
  ASSERT_EQ(ps.size(), 3u);
  EXPECT_NEAR(energies(ps, 1.0).total(), -1.2871419918, 1e-8);
  double lz = 0;
  for (std::size_t i = 0; i < 3; ++i) lz += ps.mass[i] * (ps.x[i] * ps.vy[i] - ps.y[i] * ps.vx[i]);
  EXPECT_NEAR(lz, 0.0, 1e-12);
  const Moments m = moments(ps, 0, 3);
  for (double c : {m.mr.x, m.mr.y, m.mv.x, m.mv.y}) EXPECT_NEAR(c, 0.0, 1e-12);
}

TEST(InitialConditions, UniformModelsStayInsideTheirVolume) {
  ModelOptions o = options("uniform-cube", 1000);
  o.size = 3.0;
  o.mass = 5.0;
  o.velocity = 0.2;
  const ParticleSystem cube = generate(o);
  for (std::size_t i = 0; i < cube.size(); ++i) {
    for (double v : {cube.x[i], cube.y[i], cube.z[i]}) EXPECT_LE(std::fabs(v), 3.0);
    for (double v : {cube.vx[i], cube.vy[i], cube.vz[i]}) EXPECT_LE(std::fabs(v), 0.2);
  }
  EXPECT_NEAR(moments(cube, 0, cube.size()).mass, 5.0, 1e-12);
  o.model = "uniform-sphere";
  const ParticleSystem ball = generate(o);
  for (std::size_t i = 0; i < ball.size(); ++i) {
    EXPECT_LE(std::hypot(ball.x[i], ball.y[i], ball.z[i]), 3.0 * (1 + 1e-15));
  }
}

TEST(InitialConditions, ColdSphereIsAtRestInsideItsRadius) {
  ModelOptions o = options("cold-sphere", 1000);
  o.size = 2.0;
  o.mass = 3.0;
  o.velocity = 1.0;  // ignored: the sphere is cold
  const ParticleSystem ps = generate(o);
  for (std::size_t i = 0; i < ps.size(); ++i) {
    EXPECT_EQ(ps.vx[i], 0.0);
    EXPECT_EQ(ps.vy[i], 0.0);
    EXPECT_EQ(ps.vz[i], 0.0);
    EXPECT_FALSE(std::signbit(ps.vx[i]));  // +0, not -0
    EXPECT_LE(std::hypot(ps.x[i], ps.y[i], ps.z[i]), 2.0 * (1 + 1e-15));
  }
  EXPECT_NEAR(moments(ps, 0, ps.size()).mass, 3.0, 1e-12);
}

TEST(InitialConditions, DiskRotatesOneWayAroundTheCentralMass) {
  ModelOptions o = options("disk", 4001, 5);
  o.disk_mass = 0.2;
  o.scale_length = 1.5;
  o.G = 2.0;
  const ParticleSystem ps = generate(o);
  EXPECT_EQ(ps.mass[0], 1.0);
  EXPECT_NEAR(moments(ps, 0, ps.size()).mass, 1.2, 1e-12);
  std::vector<double> radii;
  for (std::size_t i = 0; i < ps.size(); ++i) {
    EXPECT_EQ(ps.z[i], 0.0);
    EXPECT_EQ(ps.vz[i], 0.0);
    if (i == 0) continue;
    // Relative to the central body (the centre-of-mass shift moves it slightly).
    const double dx = ps.x[i] - ps.x[0], dy = ps.y[i] - ps.y[0];
    const double dvx = ps.vx[i] - ps.vx[0], dvy = ps.vy[i] - ps.vy[0];
    const double r = std::hypot(dx, dy);
    EXPECT_GT(dx * dvy - dy * dvx, 0.0) << "body " << i;
    // Circular speed from the enclosed mass 1 + Md (1 - (1 + s) e^-s), s = R / Rd.
    const double s = r / o.scale_length;
    const double enclosed = 1.0 + o.disk_mass * (1.0 - (1.0 + s) * std::exp(-s));
    EXPECT_NEAR((dvx * dvx + dvy * dvy) * r / (o.G * enclosed), 1.0, 1e-9) << "body " << i;
    radii.push_back(r);
  }
  // Median of the exponential disk's mass: 1 - (1 + s) e^-s = 1/2 at s = 1.67835.
  std::nth_element(radii.begin(), radii.begin() + 2000, radii.end());
  EXPECT_NEAR(radii[2000] / o.scale_length, 1.67835, 0.05 * 1.67835);
  const Moments m = moments(ps, 0, ps.size());
  for (double c : {m.mv.x, m.mv.y}) EXPECT_NEAR(c, 0.0, 1e-12);
}

TEST(InitialConditions, TwoClustersApproachOnAParabolicOrbit) {
  ModelOptions o = options("two-clusters", 2001, 11);
  o.separation = 8.0;
  o.impact = 2.0;
  const ParticleSystem ps = generate(o);
  const std::size_t n1 = o.n / 2;
  const Moments all = moments(ps, 0, ps.size());
  EXPECT_NEAR(all.mass, 1.0, 1e-12);
  for (double c : {all.mr.x, all.mr.y, all.mr.z, all.mv.x, all.mv.y, all.mv.z}) {
    EXPECT_NEAR(c, 0.0, 1e-12);
  }
  const Moments a = moments(ps, 0, n1), b = moments(ps, n1, ps.size());
  EXPECT_NEAR(a.mass, 0.5, 1e-12);
  EXPECT_NEAR(b.mass, 0.5, 1e-12);
  const double rx = b.mr.x / b.mass - a.mr.x / a.mass, ry = b.mr.y / b.mass - a.mr.y / a.mass;
  const double vx = b.mv.x / b.mass - a.mv.x / a.mass, vy = b.mv.y / b.mass - a.mv.y / a.mass;
  EXPECT_NEAR(rx, 8.0, 1e-12);
  EXPECT_NEAR(ry, 2.0, 1e-12);
  EXPECT_LT(rx * vx + ry * vy, 0.0);  // approaching
  // Parabolic: orbital energy of the two centres is zero.
  EXPECT_NEAR(0.5 * 0.25 * (vx * vx + vy * vy) - 0.25 / std::hypot(rx, ry), 0.0, 1e-12);
}

TEST(InitialConditions, Dim2IsThePlanarProjection) {
  for (const std::string& name : model_names()) {
    SCOPED_TRACE(name);
    ModelOptions o = options(name, 150);
    const ParticleSystem full = generate(o);
    o.dim = 2;
    const ParticleSystem flat = generate(o);
    EXPECT_EQ(flat.dim, 2);
    EXPECT_EQ(flat.x, full.x);
    EXPECT_EQ(flat.vy, full.vy);
    for (std::size_t i = 0; i < flat.size(); ++i) {
      EXPECT_EQ(flat.z[i], 0.0);
      EXPECT_EQ(flat.vz[i], 0.0);
    }
  }
}

void expect_error(const ModelOptions& o, const std::string& fragment) {
  try {
    (void)generate(o);
    ADD_FAILURE() << "no error, expected one mentioning '" << fragment << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(InitialConditions, BadOptionsThrowNamingTheOption) {
  expect_error(options("nope"), "unknown model 'nope' (available: uniform-cube,");
  expect_error(options("plummer", 0), "--n 0");
  expect_error(options("two-clusters", 1), "--n 1");
  expect_error(options("disk", 1), "--n 1");
  auto with = [](std::string model, auto set) {
    ModelOptions o = options(model);
    set(o);
    return o;
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  expect_error(with("kepler", [](ModelOptions& o) { o.e = 1.2; }),
               "--e 1.2: eccentricity must be in [0, 1)");
  expect_error(with("kepler", [](ModelOptions& o) { o.e = 1.0; }), "--e 1:");
  expect_error(with("kepler", [](ModelOptions& o) { o.e = -0.1; }), "--e -0.1");
  expect_error(with("kepler", [&](ModelOptions& o) { o.e = nan; }), "--e nan");
  expect_error(with("kepler", [](ModelOptions& o) { o.a = 0; }), "--a 0");
  expect_error(with("uniform-cube", [](ModelOptions& o) { o.size = -1; }), "--size -1");
  expect_error(with("cold-sphere", [&](ModelOptions& o) { o.mass = inf; }), "--mass inf");
  expect_error(with("uniform-sphere", [](ModelOptions& o) { o.velocity = -1; }), "--velocity -1");
  expect_error(with("two-clusters", [](ModelOptions& o) { o.separation = 0; }), "--separation 0");
  expect_error(with("two-clusters", [](ModelOptions& o) { o.impact = -1; }), "--impact -1");
  expect_error(with("disk", [](ModelOptions& o) { o.disk_mass = -1; }), "--disk-mass -1");
  expect_error(with("disk", [](ModelOptions& o) { o.scale_length = 0; }), "--scale-length 0");
  expect_error(with("plummer", [](ModelOptions& o) { o.dim = 4; }), "--dim 4");
  expect_error(with("plummer", [](ModelOptions& o) { o.G = 0; }), "--G 0");
  expect_error(with("plummer", [](ModelOptions& o) { o.radius = -1; }), "--radius -1");
  // Models with a fixed body count ignore n.
  EXPECT_EQ(generate(options("kepler", 0)).size(), 2u);
  EXPECT_EQ(generate(options("figure-eight", 0)).size(), 3u);
}

// ---- The private building blocks (src/ic). ---------------------------------------

TEST(InitialConditionsRandom, UniformAndNormalTransforms) {
  ic::Random rng(123);
  double sum = 0, sum2 = 0;
  constexpr int kDraws = 100000;
  for (int i = 0; i < kDraws; ++i) {
    const double u = rng.uniform(), uo = rng.uniform_open();
    ASSERT_TRUE(u >= 0.0 && u < 1.0);
    ASSERT_TRUE(uo > 0.0 && uo < 1.0);
    const double z = rng.normal();
    sum += z;
    sum2 += z * z;
  }
  EXPECT_NEAR(sum / kDraws, 0.0, 0.02);
  EXPECT_NEAR(sum2 / kDraws, 1.0, 0.02);
}

TEST(InitialConditionsLambertW, LowerBranchSolvesWExpW) {
  EXPECT_EQ(ic::lambert_w_minus1(-1.0 / std::numbers::e), -1.0);
  EXPECT_TRUE(std::isinf(ic::lambert_w_minus1(0.0)));
  for (double x : {-0.3678, -0.36, -0.3, -0.25, -0.2, -0.1, -1e-3, -1e-8, -1e-16}) {
    const double w = ic::lambert_w_minus1(x);
    EXPECT_LE(w, -1.0) << x;
    EXPECT_NEAR(w * std::exp(w) / x, 1.0, 1e-12) << x;
  }
  EXPECT_NEAR(ic::lambert_w_minus1(-0.1), -3.577152063957297, 1e-13);
}

}  // namespace
}  // namespace nbody
