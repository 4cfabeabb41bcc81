#pragma once
// Adding bodies from the viewer (seed 001 §8.2): a left click adds one body at the cursor,
// R adds a filled disc of bodies around it, in the screen plane.
#include "nbody/particles.hpp"

namespace nbody::viewer {

struct SpawnSettings {
  float mass = 1e-3f;
  float radius = 0.0f;
  int count = 200;           // bodies in a disc
  float disc_radius = 0.5f;  // simulation units
  float velocity[3] = {0, 0, 0};
  /// Disc: angular velocity about its centre (counter-clockwise on the screen), so a disc
  /// can start spinning instead of collapsing straight in.
  float spin = 0.0f;
};

/// Defaults that fit the system: the mean mass and radius of its bodies, and a disc a tenth
/// of the visible width across.
[[nodiscard]] SpawnSettings default_spawn_settings(const ParticleSystem& ps, double visible_width);

/// One body at `at` (z dropped for a planar system).
void add_body(ParticleSystem& ps, const double at[3], const SpawnSettings& s);

/// s.count bodies filling a disc of s.disc_radius around `at`, in the plane spanned by the
/// unit vectors right and up: a Vogel (golden-angle) spiral, evenly filled and the same
/// every time.
void add_disc(ParticleSystem& ps, const double at[3], const double right[3], const double up[3],
              const SpawnSettings& s);

}  // namespace nbody::viewer
