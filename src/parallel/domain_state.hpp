#pragma once
// The whole state of a decomposed run (every rank owns its bodies, domain_gravity.hpp) where
// something needs it whole or summed: the start (every rank keeps a share of the bodies it
// read or generated), the outputs (the bodies gathered) and the diagnostics (each rank's
// sums, all-reduced). Every function taking a ForceReducer is collective.
#include "nbody/diagnostics.hpp"
#include "nbody/distributed.hpp"
#include "nbody/particles.hpp"

namespace nbody::parallel {

/// Share `part` of `parts` of the bodies of `all` (contiguous, as equal as can be; every
/// field and the flags kept): what a rank keeps of a start every rank holds whole.
[[nodiscard]] ParticleSystem keep_share(const ParticleSystem& all, int part, int parts);

/// Every rank's bodies, on every rank, in id order (one process's order for bodies whose
/// ids were given in order: the generators', the readers'). The accelerations (potentials)
/// are valid when they are on every rank; the time is this rank's (every rank's).
[[nodiscard]] ParticleSystem gather_bodies(const ParticleSystem& local, ForceReducer& comm);

/// Mass, momenta, centre of mass and kinetic energy of all ranks' bodies, and with
/// `potentials` (local.potential current) W = 1/2 sum m phi: the sums of each rank,
/// all-reduced (energy_method Solver, or Off without).
[[nodiscard]] Diagnostics summed_diagnostics(const ParticleSystem& local, ForceReducer& comm,
                                             bool potentials);

/// summed_diagnostics with the exact W (EnergyMethod::Exact): every local body's float64
/// potential from every rank's bodies by the direct sum's ring (direct_ring.hpp: blocks of
/// sources travel around the ranks), so no rank gathers all N and each does N^2 / P pairs.
/// W agrees with one process's compute_diagnostics to the rounding of the summation order.
[[nodiscard]] Diagnostics exact_diagnostics(const ParticleSystem& local, ForceReducer& comm,
                                            double G, double softening);

/// The number of bodies over all ranks.
[[nodiscard]] std::size_t total_bodies(const ParticleSystem& local, ForceReducer& comm);

}  // namespace nbody::parallel
