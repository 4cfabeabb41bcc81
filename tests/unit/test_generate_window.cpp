// Initial conditions drawn in windows (issue "A billion bodies on two GPUs": no rank holds
// all N): generate_window's bodies are generate()'s, bit for bit, for every model and any
// number of ranks (thread ranks); and the exact sums behind their centre of mass
// (src/ic/exact_sum.hpp) are the exact value rounded once, whatever the order or split.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ic/exact_sum.hpp"
#include "ic/parallel.hpp"
#include "nbody/error.hpp"
#include "nbody/gravity.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/simulation.hpp"
#include "thread_ranks.hpp"

namespace nbody {
namespace {

using ic::ExactSum;

double exact(const std::vector<double>& terms) {
  ExactSum s;
  for (const double t : terms) s.add(t);
  return s.value();
}

TEST(ExactSum, IsTheExactValueRoundedOnce) {
  EXPECT_EQ(exact({}), 0.0);
  EXPECT_EQ(exact({1.0, 1e-30, -1.0}), 1e-30);               // a plain sum gives 0
  EXPECT_EQ(exact({1e308, 1e308, -1e308}), 1e308);           // a plain sum overflows
  EXPECT_EQ(exact({0x1p53, 1.0}), 0x1p53);                   // a tie: to even
  EXPECT_EQ(exact({0x1p53, 3.0}), 0x1p53 + 4.0);             // a tie: to even, upwards
  EXPECT_EQ(exact({0x1p53, 1.0, 0x1p-1074}), 0x1p53 + 2.0);  // past the tie by the least bit
  EXPECT_EQ(exact({-2.5, 0.5}), -2.0);
  EXPECT_EQ(exact({0x1p-1074, 0x1p-1074}), 0x1p-1073);  // subnormals
  EXPECT_EQ(exact({std::numeric_limits<double>::max(), std::numeric_limits<double>::max()}),
            std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(exact({1.0, std::numeric_limits<double>::quiet_NaN()})));
  EXPECT_TRUE(std::isnan(exact({1.0, std::numeric_limits<double>::infinity()})));
}

TEST(ExactSum, MatchesQuadPrecisionAndAnyOrderOrSplit) {
  // 10^5 terms of both signs spanning 2^-20..2^20: their sum needs < 113 bits, so the
  // __float128 running sum is exact, and its rounding to double is the answer.
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> unit(-1, 1);
  std::uniform_int_distribution<int> exponent(-20, 20);
  std::vector<double> terms(100000);
  for (double& t : terms) t = std::ldexp(unit(rng), exponent(rng));
  __float128 quad = 0;
  for (const double t : terms) quad += t;
  const double want = double(quad);
  EXPECT_EQ(exact(terms), want);
  std::shuffle(terms.begin(), terms.end(), rng);
  EXPECT_EQ(exact(terms), want);
  // Split in three, merged in any order, and through words (as ranks send them).
  ExactSum part[3];
  for (std::size_t i = 0; i < terms.size(); ++i) part[i % 7 == 0 ? 0 : i % 2 + 1].add(terms[i]);
  ExactSum merged = part[2];
  merged.add(ExactSum::from_words(part[0].words().data()));
  merged.add(part[1]);
  EXPECT_EQ(merged.value(), want);
  // On threads: the same bits for any team.
  for (int threads : {1, 2, 5}) {
    const auto s =
        ic::exact_sums<2>(threads, 0, terms.size(), nullptr, [&](std::size_t i, auto& t) {
          t = {terms[i], -terms[i]};
        });
    EXPECT_EQ(s[0], want);
    EXPECT_EQ(s[1], -want);
  }
}

bool same_bits(const ParticleSystem& a, const ParticleSystem& b) {
  return a.x == b.x && a.y == b.y && a.z == b.z && a.vx == b.vx && a.vy == b.vy && a.vz == b.vz &&
         a.mass == b.mass && a.radius == b.radius && a.id == b.id && a.dim == b.dim;
}

/// Every rank's window of P, put back together in rank order.
ParticleSystem windows_joined(const ModelOptions& o, int parts) {
  const std::size_t n = model_bodies(o);
  const auto each = testing::run_parts<ParticleSystem>(parts, [&](std::shared_ptr<ForceReducer> r) {
    const ShareRange w = share_range(n, r->part(), r->parts());
    return generate_window(o, w.first, w.last - w.first, r.get());
  });
  ParticleSystem all;
  all.dim = o.dim;
  for (const ParticleSystem& w : each) {
    for (std::size_t i = 0; i < w.size(); ++i) {
      all.add(Body{
          {w.x[i], w.y[i], w.z[i]}, {w.vx[i], w.vy[i], w.vz[i]}, w.mass[i], w.radius[i], w.id[i]});
    }
  }
  return all;
}

TEST(GenerateWindow, EveryModelGivesTheWholeModelsBodiesOnAnyNumberOfRanks) {
  // 10,007 bodies (a prime: no rank's window is a whole number of sum blocks), on 1 to 4
  // thread ranks, 3-D and planar.
  for (const std::string& name : model_names()) {
    for (const int dim : {3, 2}) {
      ModelOptions o{.model = name, .n = 10007, .seed = 5, .radius = 0.002, .dim = dim};
      const ParticleSystem whole = generate(o);
      for (const int parts : {1, 2, 3, 4}) {
        SCOPED_TRACE(name + " dim " + std::to_string(dim) + " P = " + std::to_string(parts));
        const ParticleSystem joined = windows_joined(o, parts);
        ASSERT_EQ(joined.size(), whole.size());
        EXPECT_TRUE(same_bits(joined, whole));
      }
    }
  }
}

TEST(GenerateWindow, TheCentreOfMassIsAtRestAtTheOrigin) {
  // What the exact sums are for: the spheres' centre of mass and momentum vanish to
  // rounding (a few ulps of the largest terms), on one rank as on three.
  for (const char* name : {"plummer", "hernquist", "nfw", "two-clusters", "disk"}) {
    SCOPED_TRACE(name);
    const ParticleSystem ps = windows_joined({.model = name, .n = 30000, .seed = 9}, 3);
    double m = 0, mx = 0, mv = 0, scale_x = 0, scale_v = 0;
    for (std::size_t i = 0; i < ps.size(); ++i) {
      m += ps.mass[i];
      mx += ps.mass[i] * ps.x[i];
      mv += ps.mass[i] * ps.vx[i];
      scale_x = std::max(scale_x, std::abs(ps.mass[i] * ps.x[i]));
      scale_v = std::max(scale_v, std::abs(ps.mass[i] * ps.vx[i]));
    }
    EXPECT_LE(std::abs(mx / m), 1e-12 * scale_x * double(ps.size()) / m);
    EXPECT_LE(std::abs(mv / m), 1e-12 * scale_v * double(ps.size()) / m);
  }
}

TEST(GenerateWindow, RefusesAWindowPastTheBodiesOrPartWithoutRanks) {
  const ModelOptions o{.model = "plummer", .n = 100};
  EXPECT_THROW((void)generate_window(o, 0, 50, nullptr), Error);  // the rest would be missing
  const auto refused = testing::run_parts<int>(2, [&](std::shared_ptr<ForceReducer> r) {
    int thrown = 0;
    try {
      (void)generate_window(o, 90, 20, r.get());  // past body 100: refused before any sum
    } catch (const Error&) {
      thrown = 1;
    }
    return thrown;
  });
  EXPECT_EQ(refused, (std::vector<int>{1, 1}));
  EXPECT_EQ(model_bodies({.model = "kepler", .n = 100}), 2u);
  EXPECT_EQ(model_bodies({.model = "figure-eight"}), 3u);
  EXPECT_EQ(model_bodies(o), 100u);
}

// nbody run under mpirun with --model: each rank draws its window and the run starts from the
// shares (Simulation::from_share): the same run as from the whole model dealt out.
TEST(GenerateWindow, ARunFromEveryRanksWindowIsTheRunFromTheWholeModel) {
  const ModelOptions model{.model = "plummer", .n = 3001, .seed = 4};
  SimulationOptions options;
  options.gravity.algorithm = GravityAlgorithm::Tree;
  options.gravity.softening = 0.01;
  for (const int parts : {2, 3}) {
    SCOPED_TRACE(parts);
    auto run = [&](bool from_window) {
      return testing::run_parts<ParticleSystem>(parts, [&](std::shared_ptr<ForceReducer> r) {
        Simulation sim =
            from_window ? Simulation::from_share(generate_share(model, *r), model.n, options, r)
                        : Simulation(generate(model), options, r);
        EXPECT_TRUE(sim.decomposed());
        EXPECT_EQ(sim.size(), model.n);
        for (int s = 0; s < 4; ++s) sim.step(0.01);
        return sim.all_particles();
      })[0];
    };
    const ParticleSystem drawn = run(true), dealt = run(false);
    ASSERT_EQ(drawn.size(), dealt.size());
    EXPECT_EQ(drawn.id, dealt.id);
    double largest = 0;
    for (std::size_t i = 0; i < drawn.size(); ++i)
      largest = std::max(
          {largest, std::abs(drawn.x[i] - dealt.x[i]), std::abs(drawn.vy[i] - dealt.vy[i])});
    EXPECT_LE(largest, 1e-12);
  }
}

TEST(GenerateWindow, AShareRunRefusesWhatIsNotDecomposedOrDoesNotAddUp) {
  const ModelOptions model{.model = "plummer", .n = 200, .seed = 4};
  SimulationOptions tree;
  tree.gravity.algorithm = GravityAlgorithm::Tree;
  SimulationOptions ias15 = tree;
  ias15.integrator.scheme = IntegratorScheme::Ias15;
  const auto refused = testing::run_parts<int>(2, [&](std::shared_ptr<ForceReducer> r) {
    int thrown = 0;
    for (const auto& [options, total] : {std::pair{ias15, model.n}, std::pair{tree, model.n + 1}}) {
      try {
        (void)Simulation::from_share(generate_share(model, *r), total, options, r);
      } catch (const Error&) {
        ++thrown;
      }
    }
    return thrown;
  });
  EXPECT_EQ(refused, (std::vector<int>{2, 2}));
}

}  // namespace
}  // namespace nbody
