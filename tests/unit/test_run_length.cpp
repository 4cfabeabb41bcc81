// No run without an end (issue #32): a step that does not advance the time, or a run of
// more than 2^53 steps, is refused before it starts with the smallest workable step
// (integrator.hpp, src/integrators/run_length.cpp); a step that shrinks below the time's
// resolution while the run goes stops it (IAS15, block steps); Simulation::step refuses a
// step that would leave the time where it was.
// And the other half of the same promise (nothing aborts): an exception thrown inside an
// OpenMP team is carried out and thrown on the calling thread (core/omp_team.hpp).
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <limits>
#include <new>
#include <string>

#include "core/omp_team.hpp"
#include "ic/parallel.hpp"
#include "nbody/error.hpp"
#include "nbody/integrator.hpp"
#include "nbody/simulation.hpp"
#include "test_helpers.hpp"

namespace nbody {
namespace {

using test::message_of;

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

/// Two unit masses at rest `separation` apart, at time t.
ParticleSystem pair(double separation, double t) {
  ParticleSystem ps;
  ps.resize(2);
  ps.x[1] = separation;
  ps.mass[0] = ps.mass[1] = 1;
  ps.id[0] = 1;
  ps.id[1] = 2;
  ps.time = t;
  return ps;
}

TEST(RunLength, TimeResolutionIsTheGapToTheNextDouble) {
  EXPECT_EQ(time_resolution(1e16), 2.0);
  EXPECT_EQ(time_resolution(-1e16), 2.0);
  EXPECT_EQ(time_resolution(1.0), std::ldexp(1.0, -52));
  EXPECT_GT(time_resolution(0.0), 0.0);
  // A step of the resolution advances the time there, and every smaller time.
  for (double t : {1e16, 1e6, 3.0, 1e-3}) {
    EXPECT_NE(t + time_resolution(t), t) << t;
    EXPECT_NE(t / 3 + time_resolution(t), t / 3) << t;
  }
}

TEST(RunLength, RefusesAStepThatDoesNotAdvanceTheTime) {
  EXPECT_EQ(message_of([] { check_step_advances(1e16, 1e16 + 1e5, 0.5); }),
            "--dt: at t = 1.00000000001e+16 a step of 0.5 does not advance the time; the smallest "
            "step that does is 2 (got 0.5)");
  EXPECT_NO_THROW(check_step_advances(1e16, 1e16 + 1e5, 2));
  // The coarsest time is the one of larger magnitude, before or after 0.
  EXPECT_NE(message_of([] { check_step_advances(-1e16, 0, 0.5); }), "");
  EXPECT_NE(message_of([] { check_step_advances(0, 1e17, 0.5); }), "");
  EXPECT_EQ(message_of([] { check_step_advances(std::nan(""), 1, 0.5); }),
            "the start time: must be finite (got nan)");
}

TEST(RunLength, RefusesBadTEndRunsWithTheSmallestWorkableStep) {
  // The example of the issue: at t = 1e16 doubles are 2 apart.
  const std::string m = message_of([] { (void)steps_to_reach(1e16, 10000000000100000.0, 0.5); });
  EXPECT_TRUE(starts_with(m, "--dt: at t = 1.00000000001e+16 a step of 0.5 does not advance")) << m;
  EXPECT_EQ(steps_to_reach(1e16, 10000000000100000.0, 2), 50000u);
  // --dt 1e-300 --t-end 1 announced 0 steps (the count overflowed), then counted past it.
  EXPECT_EQ(message_of([] { (void)steps_to_reach(0, 1, 1e-300); }),
            "--dt: at t = 1 a step of 1e-300 does not advance the time; the smallest step that "
            "does is 2.220446049250313e-16 (got 1e-300)");
  // Steps that advance the time but are more than 2^53: refused, with a step that is not.
  const double dt = 0.6 * time_resolution(1.0);
  const std::string many = message_of([&] { (void)steps_to_reach(-1, 1, dt); });
  EXPECT_TRUE(starts_with(many, "--dt: from t = -1 to 1 a step of ")) << many;
  EXPECT_NE(many.find("more than a run may take (2^53); the smallest workable step is "),
            std::string::npos)
      << many;
  const double workable = 2 / double(kMaxRunSteps);
  EXPECT_LE(steps_to_reach(-1, 1, std::nextafter(workable, 1.0)), kMaxRunSteps);
  EXPECT_EQ(message_of([] { (void)steps_to_reach(0, std::numeric_limits<double>::infinity(), 1); }),
            "--t-end: must be after the start time 0 (got inf)");
  EXPECT_EQ(message_of([] { (void)steps_to_reach(0, 1e308, 1e-300); }).rfind("--dt: ", 0), 0u);
}

TEST(RunLength, RefusesBadStepCounts) {
  const IntegratorOptions leapfrog;
  EXPECT_NO_THROW(check_run_steps(leapfrog, 0, 100, 0.01));
  // 2^53 steps of 1 from -2^52: every time between is an integer, exact in a double.
  EXPECT_NO_THROW(check_run_steps(leapfrog, -std::ldexp(1.0, 52), kMaxRunSteps, 1));
  EXPECT_EQ(message_of([&] { check_run_steps(leapfrog, 0, kMaxRunSteps + 1, 1); }),
            "--steps: more than a run may take (2^53 = 9007199254740992) (got 9007199254740993)");
  EXPECT_EQ(message_of([&] {
              check_run_steps(leapfrog, 0, ~std::uint64_t(0), 1);
            }).rfind("--steps: more than a run may take", 0),
            0u);
  // The time the run reaches decides: 10 steps of 0.5 from 1e16.
  EXPECT_TRUE(starts_with(message_of([&] { check_run_steps(leapfrog, 1e16, 10, 0.5); }),
                          "--dt: at t = 1.0000000000000004e+16 a step of 0.5 does not advance"));
  EXPECT_EQ(message_of([&] { check_run_steps(leapfrog, 0, 1000, 1e306); }),
            "--steps: 1000 steps of 1e+306 from t = 0 go past the largest time a double holds "
            "(got 1000)");
}

TEST(RunLength, RefusesBadIas15AndBlockStepRuns) {
  IntegratorOptions ias15;
  ias15.scheme = IntegratorScheme::Ias15;
  EXPECT_TRUE(starts_with(message_of([&] { check_run_until(ias15, 1e16, 1e16 + 1e5, 0.5); }),
                          "--dt: at t = 1.00000000001e+16 a step of 0.5 does not advance"));
  EXPECT_TRUE(starts_with(message_of([&] { check_run_steps(ias15, 1e16, 10, 0.5); }),
                          "--dt: at t = 1e+16 a step of 0.5 does not advance"));
  // Its own steps: the first one's guess need not divide the span into <= 2^53 steps.
  const double dt = 0.6 * time_resolution(1.0);
  EXPECT_NO_THROW(check_run_until(ias15, -1, 1, dt));
  ias15.ias15_epsilon = 0;  // fixed steps of dt: counted
  EXPECT_NE(message_of([&] { check_run_until(ias15, -1, 1, dt); }), "");
  EXPECT_NE(message_of([&] { check_run_until(IntegratorOptions{}, -1, 1, dt); }), "");

  IntegratorOptions adaptive;
  adaptive.timestep = TimestepMode::Adaptive;
  EXPECT_NO_THROW(check_run_until(adaptive, 0, 1e6, 0.01));  // no --dt-min: checked as it goes
  adaptive.dt_min = 1e-20;
  EXPECT_NO_THROW(check_run_until(adaptive, 0, 1e3, 0.01));
  const std::string m = message_of([&] { check_run_until(adaptive, 0, 1e6, 0.01); });
  EXPECT_TRUE(starts_with(m, "--dt-min: at t = 1000000 the smallest block step, --dt / 2^30 = "))
      << m;
  EXPECT_NE(m.find("a --dt-min of 1.1641532182693481e-10 or more does (got 1e-20)"),
            std::string::npos)
      << m;
}

TEST(RunLength, SimulationStepRefusesAStepThatDoesNotAdvanceTheTime) {
  Simulation sim(pair(1, 1e16), SimulationOptions{});
  EXPECT_TRUE(starts_with(message_of([&] { sim.step(0.5); }),
                          "--dt: at t = 1e+16 a step of 0.5 does not advance the time"));
  EXPECT_EQ(sim.time(), 1e16);
  EXPECT_EQ(sim.steps_done(), 0u);
  sim.step(2);
  EXPECT_EQ(sim.time(), 1e16 + 2);
}

TEST(RunLength, Ias15StepsBelowTheTimesResolutionStopTheRun) {
  SimulationOptions o;
  o.integrator.scheme = IntegratorScheme::Ias15;
  Simulation sim(pair(1, 1e16), o);
  const std::string m =
      message_of([&] { sim.own_step(0.5, std::numeric_limits<double>::infinity()); });
  EXPECT_TRUE(starts_with(m,
                          "--integrator ias15: at t = 1e+16 the step shrank to 0.5, below the "
                          "time's resolution there (2)"))
      << m;
  EXPECT_EQ(sim.time(), 1e16);
}

TEST(RunLength, BlockStepsBelowTheTimesResolutionStopTheRun) {
  // Two bodies 1e-8 apart, no softening: they want the deepest bin, dt / 2^30, which at
  // t = 1e6 (doubles 1.2e-10 apart) is no time step at all.
  SimulationOptions o;
  o.integrator.timestep = TimestepMode::Adaptive;
  Simulation sim(pair(1e-8, 1e6), o);
  const std::string m = message_of([&] { sim.step(0.01); });
  EXPECT_TRUE(starts_with(m, "--timestep adaptive: at t = 1000000.01 the step shrank to ")) << m;
  // At t = 0 the same bodies step on.
  Simulation early(pair(1e-8, 0), o);
  EXPECT_NO_THROW(early.step(1e-12));  // bin 3: eight substeps
}

TEST(RegionErrors, AnExceptionInATeamIsThrownOnTheCallingThread) {
  constexpr std::size_t n = 4 * ic::kParallelMin;  // a team of threads
  std::atomic<std::size_t> visited{0};
  EXPECT_EQ(message_of([&] {
              ic::for_each_body(4, 0, n, [&](std::size_t i) {
                ++visited;
                if (i == n / 2 + 1) throw Error("body " + std::to_string(i));
              });
            }),
            "body " + std::to_string(n / 2 + 1));
  EXPECT_EQ(visited.load(), n);  // the others went on
  EXPECT_THROW(ic::for_each_body(4, 0, n,
                                 [&](std::size_t i) {
                                   if (i % 1000 == 999) throw std::bad_alloc();
                                 }),
               std::bad_alloc);
  EXPECT_THROW((void)ic::exact_sums<1>(4, 0, n, nullptr,
                                       [](std::size_t i, auto& terms) {
                                         if (i == 5) throw Error("sum");
                                         terms[0] = 1;
                                       }),
               Error);
  // Nothing thrown: nothing kept.
  RegionErrors errors;
  errors.run([] {});
  EXPECT_FALSE(errors.failed());
  EXPECT_NO_THROW(errors.rethrow());
  EXPECT_EQ(ic::exact_sums<1>(4, 0, n, nullptr, [](std::size_t, auto& terms) { terms[0] = 1; })[0],
            double(n));
}

}  // namespace
}  // namespace nbody
