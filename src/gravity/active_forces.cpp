// The default GravitySolver::compute_forces_active(): every body is computed and only the
// active ones keep their results. Correct for any solver (the scalar reference, the
// per-call GPU solvers), not cheaper; the CPU direct sum and tree override it with
// evaluations of the active bodies alone.
#include <array>
#include <vector>

#include "nbody/gravity.hpp"

namespace nbody {

void GravitySolver::compute_forces_active(ParticleSystem& ps, bool potential,
                                          const std::vector<std::uint32_t>& active) {
  const bool accelerations_valid = ps.accelerations_valid();
  const bool potentials_valid = ps.potentials_valid();
  std::array<std::vector<double>*, 4> fields{&ps.ax, &ps.ay, &ps.az, &ps.potential};
  const std::size_t count = potential ? 4 : 3;
  std::array<std::vector<double>, 4> kept;
  for (std::size_t f = 0; f < count; ++f) {
    fields[f]->resize(ps.size());
    kept[f] = *fields[f];
  }
  compute_forces(ps, potential);
  // The fresh values of the active bodies into the kept arrays, which become the state.
  for (std::size_t f = 0; f < count; ++f) {
    for (const std::uint32_t i : active) kept[f][i] = (*fields[f])[i];
    fields[f]->swap(kept[f]);
  }
  ps.set_force_flags(accelerations_valid, potentials_valid);
}

}  // namespace nbody
