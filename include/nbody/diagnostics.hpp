#pragma once
// Conserved quantities and summary statistics of a particle system.
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "nbody/gravity.hpp"
#include "nbody/particles.hpp"
#include "nbody/physics/moments.hpp"

namespace nbody {

/// How a run's potential energy W is computed (--energy, Python's energy(method=)).
///   Exact:  the float64 pair sum, O(N^2) (on the GPU when the run is there);
///   Tree:   a float64 quadrupole tree with a tight geometric criterion (kTreeEnergyTheta),
///           O(N log N), on the CPU (a GPU run's bodies are copied out for it): |dW/E| to
///           ~1e-6, a few steps' cost (docs/energy.md);
///   Solver: W = 1/2 sum_i m_i phi_i from the potentials the solver computes in the same
///           pass as the forces (the direct sum: the exact W; the tree: its float32
///           approximation, ~1e-4 of E; O(N) on a step whose evaluation was asked for them);
///   Off:    no potential energy (kinetic energy, momenta and centre of mass only);
///   Auto:   without a run plan (Python, the viewer), Exact for direct-sum runs and for
///           N <= kExactEnergyMaxBodies, else Solver; `nbody run` chooses by the plan's
///           cost (choose_energy_method, energy_choice.hpp).
enum class EnergyMethod { Auto, Exact, Solver, Off, Tree };
/// Up to this many bodies `auto` takes the exact sum whatever the solver (~0.1 s on 2 cores).
inline constexpr std::size_t kExactEnergyMaxBodies = 65536;
/// The method Auto stands for with this algorithm and N (other methods unchanged). Without
/// gravity (GravityAlgorithm::None) the potential is 0 and Solver costs nothing.
[[nodiscard]] EnergyMethod resolve_energy_method(EnergyMethod m, GravityAlgorithm a, std::size_t n);
/// "auto", "exact", "solver" or "off" (src/core/option_names.cpp).
[[nodiscard]] std::string_view to_string(EnergyMethod m);
/// Throws nbody::Error naming --energy (listing the choices) for an unknown name.
[[nodiscard]] EnergyMethod parse_energy_method(std::string_view name);
[[nodiscard]] std::vector<std::string> energy_method_names();

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
  /// How `potential` was computed (Exact or Solver); Off: potential, total_energy and
  /// virial_ratio were not computed (they hold 0).
  EnergyMethod energy_method = EnergyMethod::Exact;
  [[nodiscard]] bool has_energy() const { return energy_method != EnergyMethod::Off; }
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

/// Everything from the potentials a solver computed (ps.potential, which must hold N
/// values): W = 1/2 sum_i m_i phi_i, summed in index order; energy_method Solver.
[[nodiscard]] Diagnostics diagnostics_from_potentials(const ParticleSystem& ps);

/// d with the potential energy w computed by `method`: total energy and virial ratio follow.
[[nodiscard]] Diagnostics with_potential(Diagnostics d, double w, EnergyMethod method);

/// The radii that hold the given shares of the mass (ascending, in (0, 1]) of bodies given
/// as (r^2, mass) pairs about some centre: the half-mass radius ({0.5}), the Lagrangian radii
/// ({0.1, 0.5, 0.9}). Each is the distance of the first body, outward, at which the mass
/// inside reaches the share; 0 for a share never reached (no bodies).
[[nodiscard]] std::vector<double> mass_radii(std::vector<std::pair<double, double>> r2_mass,
                                             const std::vector<double>& shares);

/// Kinetic energy alone, O(N).
[[nodiscard]] double kinetic_energy(const ParticleSystem& ps);
/// Potential energy alone, O(N^2).
[[nodiscard]] double potential_energy(const ParticleSystem& ps, double G, double softening);

/// The potential at each body, phi_i = -G sum_{j != i} m_j / sqrt(r_ij^2 + eps^2), O(N^2)
/// (for snapshots that ask for it); W = sum_i m_i phi_i / 2.
[[nodiscard]] std::vector<double> body_potentials(const ParticleSystem& ps, double G,
                                                  double softening);

/// The opening angle of the energy method `tree`: geometric criterion, quadrupoles, float64.
inline constexpr double kTreeEnergyTheta = 0.25;
/// The solver options of the energy method `tree` (a CPU tree whatever the run's device).
[[nodiscard]] GravityOptions tree_energy_options(double G, double softening, int dim, int threads,
                                                 double theta = kTreeEnergyTheta);
/// W from a float64 quadrupole tree (geometric criterion, opening angle theta), O(N log N):
/// the potential energy of the energy method `tree`. Reads positions and masses only.
[[nodiscard]] double tree_potential_energy(const ParticleSystem& ps, double G, double softening,
                                           int threads, double theta = kTreeEnergyTheta);

/// |E - E0| / |E0|, or |E - E0| when E0 == 0.
[[nodiscard]] double relative_energy_drift(double e0, double e);

}  // namespace nbody
