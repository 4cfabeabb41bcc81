#pragma once
// JSON forms of the library's result types. The keys are a public interface
// (docs/json.md): later versions add keys, never rename them.
#include <nlohmann/json.hpp>

#include "nbody/diagnostics.hpp"
#include "nbody/phase_times.hpp"

namespace nbody::cli {

[[nodiscard]] nlohmann::ordered_json to_json(const Vec3& v);
/// n, total_mass, kinetic, potential, total_energy, virial_ratio, momentum,
/// angular_momentum, com, com_velocity.
[[nodiscard]] nlohmann::ordered_json to_json(const Diagnostics& d, std::size_t n);
/// {phase: seconds, ..., "total": seconds}
[[nodiscard]] nlohmann::ordered_json to_json(const PhaseTimes& t);
/// The `test_particles` object (run and info): n_active, count and type of n bodies.
[[nodiscard]] nlohmann::ordered_json test_particles_json(std::size_t n_active, std::size_t n,
                                                         int type);

}  // namespace nbody::cli
