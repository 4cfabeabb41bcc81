#pragma once
// Collisions between bodies with radii: one interface, implementations chosen at run
// time (a CPU and a CUDA handler behind the same factory). The response itself (impulse,
// push-apart, merge) is in physics/collision_response.hpp.
//
// CPU: grid or tree search + Gauss-Seidel passes (src/collisions/); GPU: the same searches,
// sorted with cub, and Jacobi passes (src/collisions/cuda/collision_engine.cuh).
//
// A handler call is one collision stage: find the overlapping pairs, then resolve them
// `iterations` times. Simulation runs it right before every force evaluation, so the
// stored accelerations always match the positions after the collisions (see
// docs/collisions.md for where that falls in each integrator's step).
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "nbody/gravity.hpp"
#include "nbody/particles.hpp"

namespace nbody {

enum class CollisionModel {
  None,    // bodies pass through each other
  Bounce,  // impulse with restitution along the line of centres, then push-apart
  Merge,   // overlapping bodies become one (mass, momentum, volume kept)
};

/// How contact candidates are found; both find the same pairs. Grid (the default): bodies
/// sorted into a hierarchical uniform grid, neighbour cells searched (contact_grid.cpp).
/// Tree: seed 001 §3's quadtree/octree search (contact_tree.hpp): a body looks in its leaf
/// and the cells sharing an edge or a corner with it, climbing to the parent cell while it
/// is larger than its cell.
enum class CollisionSearch { Grid, Tree };

/// "grid" or "tree".
[[nodiscard]] std::string_view to_string(CollisionSearch s);
/// "grid" or "tree"; throws nbody::Error naming --collision-search otherwise.
[[nodiscard]] CollisionSearch parse_collision_search(std::string_view name);

[[nodiscard]] std::string_view to_string(CollisionModel m);
/// "none", "bounce" or "merge"; throws nbody::Error naming --collisions otherwise.
[[nodiscard]] CollisionModel parse_collision_model(std::string_view name);
[[nodiscard]] std::vector<std::string> collision_model_names();

struct CollisionOptions {
  CollisionModel model = CollisionModel::None;
  double restitution = 1.0;  // bounce: 1 elastic (seed 004), 0 perfectly inelastic
  int iterations = 1;        // resolution passes per stage (seed 001 §1.2)
  CollisionSearch search = CollisionSearch::Grid;  // how candidate pairs are found
  int dim = 3;      // 2: merged radius keeps area, grid cells are squares
  int threads = 0;  // OpenMP threads for detection; 0 = OpenMP's default
  Device device = Device::Cpu;
  // For the energy bookkeeping only: the change of each resolved pair's own potential
  // -G m_a m_b / sqrt(d^2 + eps^2) is counted in energy_lost. G = 0 counts kinetic
  // energy only.
  double G = 0.0;
  double softening = 0.0;
};

/// Throws nbody::Error naming the option for restitution outside [0, 1], iterations < 1,
/// dim other than 2 or 3, or negative threads.
void validate(const CollisionOptions& options);

/// A merge: `absorbed` was merged into `kept` (the smaller id of the two).
struct MergeEvent {
  std::uint64_t kept = 0;
  std::uint64_t absorbed = 0;
};

/// What one collision stage did.
struct CollisionStats {
  std::uint64_t contacts = 0;    // pairs overlapping (by more than rounding) at the start
  std::uint64_t candidates = 0;  // pairs the first pass looked at (contacts + near misses)
  std::uint64_t merges = 0;
  std::uint64_t active_merged = 0;  // test particles: the active bodies merged into others
  std::uint64_t searches = 1;       // neighbour searches (again when bodies moved far)
  std::uint64_t passes = 0;         // resolution passes run (stops early once nothing overlaps)
  /// Largest overlap left after the stage, over all pairs (the search is repeated when
  /// bodies moved beyond its skin), as a fraction of the smaller radius of the pair (0 when
  /// none overlap).
  double max_overlap = 0;
  /// Energy removed by the stage, E_before - E_after: kinetic energy lost in impulses and
  /// merges, plus (G > 0) the change of each resolved pair's own potential energy.
  /// Negative when pushing bound bodies apart adds energy.
  double energy_lost = 0;
  double detect_seconds = 0;       // sort + neighbour search
  double resolve_seconds = 0;      // the resolution passes, write-back and removal of merged bodies
  std::vector<MergeEvent> merged;  // in the order the merges happened
};

/// Sums over a run.
struct CollisionTotals {
  std::uint64_t stages = 0;
  std::uint64_t contacts = 0;
  std::uint64_t merges = 0;
  double max_overlap_last = 0;  // max_overlap of the latest stage
  double energy_lost = 0;
  double seconds = 0;

  void add(const CollisionStats& s) {
    ++stages;
    contacts += s.contacts;
    merges += s.merges;
    max_overlap_last = s.max_overlap;
    energy_lost += s.energy_lost;
    seconds += s.detect_seconds + s.resolve_seconds;
  }
  /// The totals of later stages (a stepper's since its last report) added to these.
  void add(const CollisionTotals& later) {
    if (later.stages == 0) return;
    stages += later.stages;
    contacts += later.contacts;
    merges += later.merges;
    max_overlap_last = later.max_overlap_last;
    energy_lost += later.energy_lost;
    seconds += later.seconds;
  }
};

/// Hierarchical time steps: which bounces a stage may resolve (physics/timestep.hpp, the
/// contacts). With `bins` set, a bouncing pair is resolved only when both bodies are in
/// bin `ready_bin` (the bin whose step the stage is the middle of); every body found
/// overlapping another, resolved or not, gets kContactFlag in its byte. Merges ignore the
/// gate. Empty: all pairs.
struct ContactGate {
  std::uint8_t* bins = nullptr;  // one byte a body, in the bodies' order
  int ready_bin = -1;
};

/// Finds and resolves contacts in a particle system.
class CollisionHandler {
 public:
  virtual ~CollisionHandler() = default;
  /// E.g. "bounce-grid-cpu".
  [[nodiscard]] virtual std::string name() const = 0;
  /// One collision stage. May move bodies and change velocities; merges remove bodies
  /// from ps (survivors keep their order and ids). Marks accelerations stale when
  /// anything moved. `gate`: the contacts that may be resolved now (hierarchical steps).
  virtual CollisionStats resolve(ParticleSystem& ps, const ContactGate& gate) = 0;
  CollisionStats resolve(ParticleSystem& ps) { return resolve(ps, ContactGate{}); }
};

/// Builds the handler the options ask for (after validate()); nullptr for
/// CollisionModel::None; throws nbody::Error for an unavailable device.
[[nodiscard]] std::unique_ptr<CollisionHandler> make_collision_handler(
    const CollisionOptions& options);

/// A pair of body indices (a < b) into a ParticleSystem.
struct IndexPair {
  std::size_t a = 0, b = 0;
  friend bool operator==(const IndexPair& l, const IndexPair& r) {
    return l.a == r.a && l.b == r.b;
  }
};

/// Every pair with |x_a - x_b| < (r_a + r_b) (1 + skin), sorted, through the search the
/// handlers use (grid or tree, O(N log N)) on the CPU or the GPU; for tests and tools.
[[nodiscard]] std::vector<IndexPair> find_contact_pairs(
    const ParticleSystem& ps, double skin = 0.0, int threads = 0, Device device = Device::Cpu,
    CollisionSearch search = CollisionSearch::Grid);

}  // namespace nbody
