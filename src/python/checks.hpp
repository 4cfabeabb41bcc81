#pragma once
// The checks of bodies handed over from Python, in the one message style of bad input
// (nbody::input_error: "masses[0]: must be finite and > 0 (got -1)"), raised as
// nbody.Error (a ValueError). The rule is the file readers' (text, CSV, HDF5, checkpoints),
// so that whatever the module accepts, save() writes and load() reads back:
//   positions, velocities  finite
//   masses                 finite and > 0; finite and >= 0 for test particles (the bodies
//                          from n_active on, particles.hpp)
//   radii                  finite and >= 0
//   ids                    >= 1 and unique (add() alone takes 0 as "the next free id")
#include <cstdint>

#include "nbody/input_error.hpp"
#include "nbody/particles.hpp"
#include "python/arrays.hpp"

namespace nbody::python {

/// Positions and velocities Finite, masses Positive, radii NonNegative: the readers' rules.
using Bound = ValueRule;

/// Every value of the argument `name` within `bound`; otherwise nbody::Error naming the
/// first bad one as name[i] (one dimension) or name[i, k] (an (N, 3) array).
void check_values(const InputArray& a, const char* name, Bound bound);

/// A Python int (not a bool) from `least` to 2^64 - 1 for the argument `name` of `function`
/// ("generate()"): generate()'s n and seed, evolve()'s output cadences. A float or a bool
/// is a TypeError, a value out of range nbody.Error naming it.
std::uint64_t count_value(nb::handle value, const char* function, const char* name,
                          std::uint64_t least);

/// Masses of the argument `name` of bodies to come: finite and > 0, or 0 (a test particle,
/// whose place mark_test_particles() or add() judge); a bad one named with the rule "> 0".
void check_masses(const InputArray& a, const char* name);
/// Masses of the argument `name` for bodies whose first `active` are active: those finite
/// and > 0, the others (test particles) finite and >= 0.
void check_masses(const InputArray& a, const char* name, std::size_t active);

/// Bodies of mass 0 after every body with mass become test particles (n_active: the bodies
/// with mass), as the file readers make them; a body with mass after one without is an
/// nbody::Error naming both as name[i].
void mark_test_particles(ParticleSystem& ps, const char* name);

/// Ids of the argument `name`: >= 1 (or 0 too, where 0 asks for a fresh id) and unique
/// among themselves (0 may repeat).
void check_ids(const InputIds& ids, const char* name, bool zero_allowed);

/// The whole state as the views name it (x[i], vx[i], masses[i], radii[i], ids[i]; masses
/// of test particles >= 0): what
/// edits through the numpy views are checked against before the next step. `ids`: also
/// check the ids (the unique test needs a hash table; skipped when they did not change).
void check_state(const ParticleSystem& ps, bool ids = true);

}  // namespace nbody::python
