#pragma once
// Particle storage: structure of arrays, float64, one array per component.
// Every solver, integrator and writer reads and writes through this type.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace nbody {

struct Vec3 {
  double x = 0, y = 0, z = 0;
};

/// One body, used to add bodies and to read them back one at a time.
struct Body {
  Vec3 position;
  Vec3 velocity;
  double mass = 0;
  double radius = 0;
  std::uint64_t id = 0;  // 0 means "assign the next free id"
};

/// Structure-of-arrays particle state. Accelerations belong to the state because the
/// leapfrog and the diagnostics reuse the ones computed at the end of the previous step.
class ParticleSystem {
 public:
  std::vector<double> x, y, z;     // positions
  std::vector<double> vx, vy, vz;  // velocities
  std::vector<double> ax, ay, az;  // accelerations at the current positions
  /// The potential at each body, phi_i = -G sum_{j != i} m_j / sqrt(r_ij^2 + eps^2) as the
  /// solver computes it (the tree's approximation; G included), filled by the force
  /// evaluations that are asked for it: current only while potentials_valid().
  std::vector<double> potential;
  std::vector<double> mass;
  std::vector<double> radius;
  std::vector<std::uint64_t> id;
  int dim = 3;      // 3, or 2 for planar systems (z and vz held at exactly 0)
  double time = 0;  // simulated time
  /// Test particles, as REBOUND's N_active and testparticle_type: bodies [0, n_active) are
  /// active and the others test particles, which feel the active bodies and never each
  /// other. Type 0: the active bodies do not feel them (their masses play no part in the
  /// forces; with mass 0 this is exact physics); type 1: they also pull on the active
  /// bodies. The force work is O(N * n_active). kAllActive (the default): no test particles.
  static constexpr std::size_t kAllActive = std::numeric_limits<std::size_t>::max();
  std::size_t n_active = kAllActive;
  int test_particle_type = 0;

  [[nodiscard]] std::size_t size() const { return x.size(); }
  [[nodiscard]] bool empty() const { return x.empty(); }
  /// The number of active bodies (all of them without test particles).
  [[nodiscard]] std::size_t active_count() const { return std::min(n_active, size()); }
  [[nodiscard]] bool has_test_particles() const { return n_active < size(); }

  void resize(std::size_t n);
  void reserve(std::size_t n);
  /// resize(n) for arrays about to be overwritten (a download, a file's rows): an array that
  /// must grow is replaced, not copied, with room for n/8 more, so that a rank whose share
  /// of a decomposed run changes in number keeps reusing its memory (new memory is slow on
  /// some machines: core/huge_pages.hpp). The values are unspecified until written.
  void resize_for_overwrite(std::size_t n);
  /// n and the room resize_for_overwrite (and the generators) give arrays that grow: n/8 more.
  [[nodiscard]] static std::size_t with_room(std::size_t n) { return n + n / 8; }
  void clear();
  /// Appends a body; an id of 0 gets one more than the largest id seen so far.
  void add(const Body& body);
  /// Removes the bodies at these indices (any order; repeats count once). The others keep
  /// their order and ids (n_active counts the active bodies removed); their accelerations are
  /// marked stale (they included the removed bodies). Throws nbody::Error for an index >= size(),
  /// and then removes nothing.
  void remove(const std::vector<std::size_t>& indices);
  /// Sets ids to 1..N (positive ids, as GADGET-style readers expect).
  void assign_sequential_ids();
  [[nodiscard]] Body body(std::size_t i) const;
  /// True when any body has a non-zero radius (decides whether writers emit radii).
  [[nodiscard]] bool has_radii() const;

  /// Marks the stored accelerations (and potentials) as not matching the positions.
  void invalidate_accelerations() {
    accelerations_valid_ = false;
    potentials_valid_ = false;
  }
  void set_accelerations_valid() { accelerations_valid_ = true; }
  [[nodiscard]] bool accelerations_valid() const { return accelerations_valid_; }
  /// The potentials: set by a force evaluation that computed them, cleared by anything
  /// that moves the bodies (a step, an edit) or evaluates forces without them.
  void invalidate_potentials() { potentials_valid_ = false; }
  void set_potentials_valid() { potentials_valid_ = true; }
  /// Both flags at once: (true, potential) after a force evaluation that computed the
  /// potentials or not; the caller's flags again after an evaluation of some bodies.
  void set_force_flags(bool accelerations_valid, bool potentials_valid) {
    accelerations_valid_ = accelerations_valid;
    potentials_valid_ = potentials_valid;
  }
  [[nodiscard]] bool potentials_valid() const { return potentials_valid_; }

  /// Makes the system planar: sets z and vz to exactly 0 and dim to 2.
  /// Returns the number of bodies whose z or vz was non-zero.
  std::size_t make_planar();

 private:
  bool accelerations_valid_ = false;
  bool potentials_valid_ = false;
  std::uint64_t next_id_ = 1;
};

/// What the file readers check, for bodies that come from elsewhere (the Python module's
/// arrays): finite positions and velocities, masses > 0 and finite (>= 0 for test
/// particles), radii >= 0 and finite, no id used twice (0 means "not assigned" and may
/// repeat), n_active <= N (or kAllActive) and test_particle_type 0 or 1. Throws
/// nbody::Error("body I (id ID): problem") for the first bad body.
void validate_bodies(const ParticleSystem& ps);

/// Where the massless bodies are: the first of them, and the first body with mass after one
/// (each size() when there is none).
struct MassOrder {
  std::size_t first_massless;
  std::size_t mass_after_massless;
};
[[nodiscard]] MassOrder mass_order(const ParticleSystem& ps);

/// Bodies of mass 0 are test particles: where the massless bodies are the last ones (after
/// every body with mass), n_active becomes the number of bodies with mass; without massless
/// bodies nothing changes. Returns the index of the first massive body that follows a
/// massless one (the caller names it: test particles must come last), or size() if none.
[[nodiscard]] std::size_t mark_massless_test_particles(ParticleSystem& ps);

/// x y z of every body as float, interleaved (3 n values): what drawing needs.
void positions_as_float(const ParticleSystem& ps, std::vector<float>& xyz);

/// Read-only spans of the data a gravity kernel needs (no ownership).
struct PositionsMassesView {
  const double* x;
  const double* y;
  const double* z;
  const double* mass;
  std::size_t n;
};

[[nodiscard]] inline PositionsMassesView positions_masses(const ParticleSystem& ps) {
  return {ps.x.data(), ps.y.data(), ps.z.data(), ps.mass.data(), ps.size()};
}

}  // namespace nbody
