#include "cli/json_output.hpp"

namespace nbody::cli {

nlohmann::ordered_json to_json(const Vec3& v) {
  return nlohmann::ordered_json::array({v.x, v.y, v.z});
}

nlohmann::ordered_json to_json(const Diagnostics& d, std::size_t n) {
  return {{"n", n},
          {"total_mass", d.total_mass},
          {"kinetic", d.kinetic},
          {"potential", d.potential},
          {"total_energy", d.total_energy},
          {"virial_ratio", d.virial_ratio},
          {"momentum", to_json(d.momentum)},
          {"angular_momentum", to_json(d.angular_momentum)},
          {"com", to_json(d.com)},
          {"com_velocity", to_json(d.com_velocity)}};
}

nlohmann::ordered_json test_particles_json(std::size_t n_active, std::size_t n, int type) {
  return {{"n_active", n_active}, {"count", n - n_active}, {"type", type}};
}

nlohmann::ordered_json to_json(const PhaseTimes& t) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [name, seconds] : t.entries()) j[name] = seconds;
  j["total"] = t.total();
  return j;
}

}  // namespace nbody::cli
