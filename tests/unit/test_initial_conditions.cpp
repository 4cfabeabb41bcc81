// Initial-condition generators: the model names, determinism (same seed, same bits for any
// thread count), counts, the planar projection, the errors for bad options, and the private
// building blocks (Philox streams, Lambert W).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include "ic/models.hpp"
#include "ic/random.hpp"
#include "nbody/error.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/particles.hpp"

namespace nbody {
namespace {

bool same_bits(const ParticleSystem& a, const ParticleSystem& b) {
  return a.x == b.x && a.y == b.y && a.z == b.z && a.vx == b.vx && a.vy == b.vy && a.vz == b.vz &&
         a.mass == b.mass && a.radius == b.radius && a.id == b.id && a.dim == b.dim;
}

const std::vector<std::string> kRandomModels = {"uniform-cube", "uniform-sphere", "cold-sphere",
                                                "plummer",      "hernquist",      "nfw",
                                                "two-clusters", "disk",           "giants"};

TEST(InitialConditions, ModelNamesAreTheDocumentedOnes) {
  EXPECT_EQ(model_names(),
            (std::vector<std::string>{"uniform-cube", "uniform-sphere", "cold-sphere", "plummer",
                                      "hernquist", "nfw", "kepler", "figure-eight", "two-clusters",
                                      "disk", "giants"}));
}

TEST(InitialConditions, SameSeedIsBitIdenticalDifferentSeedDiffers) {
  for (const std::string& name : kRandomModels) {
    SCOPED_TRACE(name);
    const ParticleSystem a = generate({.model = name, .n = 300, .seed = 42});
    const ParticleSystem b = generate({.model = name, .n = 300, .seed = 42});
    const ParticleSystem c = generate({.model = name, .n = 300, .seed = 43});
    EXPECT_TRUE(same_bits(a, b));
    EXPECT_NE(a.x, c.x);
  }
}

TEST(InitialConditions, UniformCubeIsOurTransformOfEachBodysPhiloxStream) {
  // Pins seed -> bodies to Philox4x32-10 (checked against Random123's known answers
  // below): body i's words are the blocks (block, 0, i, 0) under the key (seed, 0), so
  // they cannot change silently with the standard library or the thread count.
  const ParticleSystem ps =
      generate({.model = "uniform-cube", .n = 5, .seed = 9, .size = 2.0, .velocity = 0.5});
  for (std::uint32_t i = 0; i < 5; ++i) {
    std::vector<std::uint64_t> words;
    for (std::uint32_t block = 0; block < 3; ++block) {
      const ic::PhiloxBlock out = ic::philox4x32_10({block, 0, i, 0}, {9, 0});
      words.push_back(out[0] | std::uint64_t{out[1]} << 32);
      words.push_back(out[2] | std::uint64_t{out[3]} << 32);
    }
    std::size_t k = 0;
    auto u = [&](double scale) {
      return scale * (2.0 * (double(words[k++] >> 11) * 0x1.0p-53) - 1.0);
    };
    for (const auto* c : {&ps.x, &ps.y, &ps.z}) EXPECT_EQ((*c)[i], u(2.0));
    for (const auto* c : {&ps.vx, &ps.vy, &ps.vz}) EXPECT_EQ((*c)[i], u(0.5));
  }
}

TEST(InitialConditions, SameBodiesForAnyThreadCount) {
  // 20000 bodies: the loops run on a team (>= ic::kParallelMin bodies) and the centre-of-
  // mass sums span several blocks (ic::kSumBlock), so a thread-dependent order would show.
  for (const std::string& name : model_names()) {
    SCOPED_TRACE(name);
    ModelOptions o{.model = name, .n = 20000, .seed = 7, .radius = 0.001, .threads = 1};
    const ParticleSystem one = generate(o);
    for (int threads : {2, 3, 8, 0}) {
      o.threads = threads;
      EXPECT_TRUE(same_bits(one, generate(o))) << threads << " threads";
    }
    o.dim = 2;  // the planar projection too
    o.threads = 1;
    const ParticleSystem flat_one = generate(o);
    o.threads = 5;
    EXPECT_TRUE(same_bits(flat_one, generate(o)));
  }
}

TEST(InitialConditions, CuspedSpheresAreTheSameForOneAndTwoThreads) {
  for (const char* model : {"hernquist", "nfw"}) {
    ModelOptions o{.model = model, .n = 20000, .seed = 12, .threads = 1};
    const ParticleSystem one = generate(o);
    EXPECT_TRUE(same_bits(one, generate(o))) << model;
    o.threads = 2;
    EXPECT_TRUE(same_bits(one, generate(o))) << model;
  }
}

TEST(InitialConditions, EveryModelGivesCountFiniteValuesPositiveMassesIdsAndRadii) {
  for (const std::string& name : model_names()) {
    SCOPED_TRACE(name);
    const ParticleSystem ps = generate({.model = name, .n = 101, .radius = 0.01});
    const std::size_t fixed = name == "kepler" ? 2 : name == "figure-eight" ? 3 : 101;
    ASSERT_EQ(ps.size(), fixed);
    EXPECT_EQ(ps.dim, 3);
    for (std::size_t i = 0; i < ps.size(); ++i) {
      for (double v : {ps.x[i], ps.y[i], ps.z[i], ps.vx[i], ps.vy[i], ps.vz[i]}) {
        ASSERT_TRUE(std::isfinite(v)) << "body " << i;
      }
      // Active bodies have mass; the test particles (giants' disc) have none.
      if (i < ps.active_count()) {
        EXPECT_GT(ps.mass[i], 0.0);
      } else {
        EXPECT_EQ(ps.mass[i], 0.0);
      }
      EXPECT_EQ(ps.radius[i], 0.01);
      EXPECT_EQ(ps.id[i], i + 1);
    }
  }
}

TEST(InitialConditions, Dim2IsThePlanarProjection) {
  for (const std::string& name : model_names()) {
    SCOPED_TRACE(name);
    ModelOptions o{.model = name, .n = 150};
    const ParticleSystem full = generate(o);
    o.dim = 2;
    const ParticleSystem flat = generate(o);
    EXPECT_EQ(flat.dim, 2);
    EXPECT_EQ(flat.x, full.x);
    EXPECT_EQ(flat.vy, full.vy);
    for (std::size_t i = 0; i < flat.size(); ++i) EXPECT_TRUE(flat.z[i] == 0 && flat.vz[i] == 0);
  }
}

void expect_error(const ModelOptions& o, const std::string& message_part) {
  try {
    (void)generate(o);
    ADD_FAILURE() << "no error, expected one with '" << message_part << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(message_part), std::string::npos) << e.what();
  }
}

TEST(InitialConditions, BadOptionsThrowNamingTheOption) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  expect_error({.model = "nope"}, "unknown model 'nope' (available: uniform-cube,");
  expect_error({.model = "plummer", .n = 0}, "-n: model 'plummer' needs at least 1 body (got 0)");
  expect_error({.model = "two-clusters", .n = 1}, "-n: model 'two-clusters' needs at least 2");
  expect_error({.model = "disk", .n = 1}, "(got 1)");
  expect_error({.model = "kepler", .e = 1.2}, "--e: eccentricity must be in [0, 1) (got 1.2)");
  expect_error({.model = "kepler", .e = 1.0}, "--e: eccentricity must be in [0, 1) (got 1)");
  expect_error({.model = "kepler", .e = -0.1}, "(got -0.1)");
  expect_error({.model = "kepler", .e = nan}, "--e: eccentricity must be in [0, 1) (got nan)");
  expect_error({.model = "kepler", .a = 0},
               "--a: semi-major axis must be positive and finite (got 0)");
  expect_error({.model = "uniform-cube", .size = -1}, "--size: ");
  expect_error({.model = "cold-sphere", .mass = inf},
               "--mass: total mass must be positive and finite (got inf)");
  expect_error({.model = "uniform-sphere", .velocity = -1},
               "--velocity: velocity range must be non-negative and finite (got -1)");
  expect_error({.model = "two-clusters", .separation = 0}, "--separation: ");
  expect_error({.model = "two-clusters", .impact = -1},
               "--impact: impact parameter must be non-negative and finite (got -1)");
  expect_error({.model = "disk", .disk_mass = -1},
               "--disk-mass: disk mass must be non-negative and finite (got -1)");
  expect_error({.model = "disk", .scale_length = 0},
               "--scale-length: disk scale length must be positive and finite (got 0)");
  expect_error({.model = "hernquist", .rmax = 0}, "--rmax: truncation radius");
  expect_error({.model = "hernquist", .rmax = nan}, "(got nan)");
  expect_error({.model = "hernquist", .rmax = inf}, "(got inf)");
  expect_error(
      {.model = "nfw", .concentration = -1},
      "--concentration: concentration c = r_200 / r_s must be positive and finite (got -1)");
  expect_error({.model = "nfw", .concentration = inf}, "--concentration: ");
  expect_error({.model = "nfw", .n = 0}, "-n: ");
  expect_error({.model = "hernquist", .G = 0},
               "--G: gravitational constant must be positive and finite (got 0)");
  expect_error({.model = "plummer", .dim = 4}, "--dim: dimension must be 2 or 3 (got 4)");
  expect_error({.model = "plummer", .G = 0}, "--G: ");
  expect_error({.model = "uniform-cube", .G = -1},
               "--G: gravitational constant must be non-negative and finite (got -1)");
  expect_error({.model = "plummer", .threads = -1}, "--threads: must be >= 0 (got -1)");
  // Runs without gravity (--G 0) take the models whose velocities do not use G.
  EXPECT_EQ(generate({.model = "uniform-cube", .n = 10, .G = 0, .velocity = 1}).size(), 10u);
  expect_error({.model = "plummer", .radius = -1},
               "--radius: body radius must be non-negative and finite (got -1)");
  // Every parameter is checked whatever the model (the command line checks each option as it
  // is parsed, before the model is known): a value no model could use is an error.
  expect_error({.model = "plummer", .e = 1.5}, "--e: eccentricity must be in [0, 1) (got 1.5)");
  expect_error({.model = "kepler", .rmax = nan}, "--rmax: ");
  EXPECT_NO_THROW(validate(ModelOptions{}));
  // Models with a fixed body count ignore n.
  EXPECT_EQ(generate({.model = "kepler", .n = 0}).size(), 2u);
  EXPECT_EQ(generate({.model = "figure-eight", .n = 0}).size(), 3u);
}

// ---- The private building blocks (src/ic). ---------------------------------------

TEST(InitialConditionsRandom, PhiloxMatchesTheRandom123KnownAnswers) {
  // Random123 v1.14.0, tests/kat_vectors, the three "philox4x32 10" lines.
  EXPECT_EQ(ic::philox4x32_10({0, 0, 0, 0}, {0, 0}),
            (ic::PhiloxBlock{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(
      ic::philox4x32_10({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}),
      (ic::PhiloxBlock{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(
      ic::philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}),
      (ic::PhiloxBlock{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
  static_assert(ic::philox4x32_10({0, 0, 0, 0}, {0, 0})[0] == 0x6627e8d5);  // constexpr
}

TEST(InitialConditionsRandom, StreamsAreTheCountersOfOneSeedsKey) {
  // Stream (seed, i): key = seed's halves, counter = (block halves, i's halves).
  const std::uint64_t seed = 0x0123456789abcdefULL, stream = 0xfedcba9876543210ULL;
  ic::Random rng(seed, stream);
  for (std::uint64_t block = 0; block < 4; ++block) {
    const ic::PhiloxBlock out = ic::philox4x32_10({std::uint32_t(block), 0, 0x76543210, 0xfedcba98},
                                                  {0x89abcdef, 0x01234567});
    EXPECT_EQ(rng.next_u64(), out[0] | std::uint64_t{out[1]} << 32);
    EXPECT_EQ(rng.next_u64(), out[2] | std::uint64_t{out[3]} << 32);
  }
  ic::Random a(1, 0), b(1, 1), c(2, 0);
  const std::uint64_t wa = a.next_u64();
  EXPECT_NE(wa, b.next_u64());
  EXPECT_NE(wa, c.next_u64());
}

TEST(InitialConditionsRandom, UniformAndNormalTransforms) {
  ic::Random rng(123, 4);
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
