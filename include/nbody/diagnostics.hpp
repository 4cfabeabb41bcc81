#pragma once
// Conserved quantities and summary statistics of a particle system.
#include <vector>

#include "nbody/particles.hpp"
#include "nbody/physics/moments.hpp"

namespace nbody {

struct Diagnostics {
  double total_mass = 0;
  double kinetic = 0;    // T = sum m v^2 / 2
  double potential = 0;  // W = -G sum_{i<j} m_i m_j / sqrt(r^2 + eps^2), same softening as forces
  double total_energy = 0;
  double virial_ratio = 0;  // 2T/|W| (0 when W = 0)
  Vec3 momentum;
  Vec3 angular_momentum;  // about the origin
  Vec3 com;               // centre of mass
  Vec3 com_velocity;
};

/// Computes every quantity in float64 (the potential is an O(N^2) pair sum, OpenMP-parallel).
[[nodiscard]] Diagnostics compute_diagnostics(const ParticleSystem& ps, double G, double softening);

/// Everything but the potential (mass, kinetic energy, momenta, centre of mass), O(N);
/// potential, total_energy and virial_ratio stay 0.
[[nodiscard]] Diagnostics compute_moments(const ParticleSystem& ps);

/// The diagnostics from the sums of physics/moments.hpp (add_body_moments), the kinetic
/// and the potential energy: the one place both the CPU and the GPU finish them.
[[nodiscard]] Diagnostics diagnostics_from_sums(const double (&sum)[kMomentSums], double kinetic,
                                                double potential);

/// Kinetic energy alone, O(N).
[[nodiscard]] double kinetic_energy(const ParticleSystem& ps);
/// Potential energy alone, O(N^2).
[[nodiscard]] double potential_energy(const ParticleSystem& ps, double G, double softening);

/// The potential at each body, phi_i = -G sum_{j != i} m_j / sqrt(r_ij^2 + eps^2), O(N^2)
/// (for snapshots that ask for it); W = sum_i m_i phi_i / 2.
[[nodiscard]] std::vector<double> body_potentials(const ParticleSystem& ps, double G,
                                                  double softening);

/// |E - E0| / |E0|, or |E - E0| when E0 == 0.
[[nodiscard]] double relative_energy_drift(double e0, double e);

}  // namespace nbody
