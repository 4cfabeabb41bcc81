#pragma once
// The checks of bodies handed over from Python, in the one message style of bad input
// (nbody::input_error: "masses[0]: must be finite and > 0 (got -1)"), raised as
// nbody.Error (a ValueError). The rule is the file readers' (text, CSV, HDF5, checkpoints),
// so that whatever the module accepts, save() writes and load() reads back:
//   positions, velocities  finite
//   masses                 finite and > 0 (no massless bodies: every reader refuses them)
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

/// Ids of the argument `name`: >= 1 (or 0 too, where 0 asks for a fresh id) and unique
/// among themselves (0 may repeat).
void check_ids(const InputIds& ids, const char* name, bool zero_allowed);

/// The whole state as the views name it (x[i], vx[i], masses[i], radii[i], ids[i]): what
/// edits through the numpy views are checked against before the next step. `ids`: also
/// check the ids (the unique test needs a hash table; skipped when they did not change).
void check_state(const ParticleSystem& ps, bool ids = true);

}  // namespace nbody::python
