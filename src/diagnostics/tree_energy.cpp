// The potential energy from a float64 quadrupole tree with a tight opening angle: the
// energy method `tree` (include/nbody/diagnostics.hpp), for systems where the exact pair sum
// costs too much and the run's own solver (a float32 tree with a loose criterion) errs by
// more than a run drifts.
#include <memory>

#include "nbody/diagnostics.hpp"
#include "nbody/gravity.hpp"

namespace nbody {

GravityOptions tree_energy_options(double G, double softening, int dim, int threads, double theta) {
  GravityOptions o;
  o.algorithm = GravityAlgorithm::Tree;
  o.device = Device::Cpu;
  o.precision = Precision::Double;
  o.G = G;
  o.softening = softening;
  o.threads = threads;
  // Geometric, not relative: the criterion must not depend on the run's last accelerations,
  // so that the same positions give the same W (a restart, a replay) whatever came before.
  o.mac = OpeningCriterion::Geometric;
  o.theta = theta;
  o.quadrupole = true;
  o.dim = dim;
  return o;
}

double tree_potential_energy(const ParticleSystem& ps, double G, double softening, int threads,
                             double theta) {
  const std::size_t n = ps.size();
  if (n < 2 || G == 0) return 0.0;
  // The solver writes accelerations and potentials: a copy of the positions and masses
  // keeps the run's own (the next step's forces) untouched.
  ParticleSystem copy;
  copy.resize(n);
  copy.dim = ps.dim;
  copy.x = ps.x;
  copy.y = ps.y;
  copy.z = ps.z;
  copy.mass = ps.mass;
  const std::unique_ptr<GravitySolver> solver =
      make_gravity_solver(tree_energy_options(G, softening, ps.dim, threads, theta));
  solver->compute_forces(copy, true);
  double w = 0;  // in index order: the same bits whatever the threads did
  for (std::size_t i = 0; i < n; ++i) w += ps.mass[i] * copy.potential[i];
  return 0.5 * w;
}

}  // namespace nbody
