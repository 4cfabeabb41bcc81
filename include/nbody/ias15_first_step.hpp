#pragma once
// IAS15's first step where the user gave none (`nbody run --integrator ias15` without --dt,
// Python's sim.dt of an IAS15 run never set): REBOUND's default dt. IAS15 then picks its own
// steps; on the chaotic Pythagorean problem the first step moves the end's energy error between
// 8e-12 and 1.1e-10 with no trend (docs/ias15.md), so the choice is REBOUND's, not a tuning.
namespace nbody {

inline constexpr double kIas15FirstStep = 0.001;

}  // namespace nbody
