#pragma once
// Collisions on the GPU: the same models and response functions as the CPU handler
// (physics/collision_response.hpp), on float64 SoA arrays in device memory, for the
// resident stepper (simulation/cuda) and the per-call GPU handler.
//
// Detection (CollisionOptions::search): a hierarchical grid built by sorting, or seed 001's
// quadtree/octree over Morton-sorted bodies (collision_tree_detect.cu; the same pairs).
// The grid: level l has cells of h0 2^l; a body sits
// on the first level whose cells are at least its diameter, so two bodies that can touch
// are in the same or adjacent cells of the coarser one's level: each body scans the 27 (9 in
// 2D) cells around it on its own level and on every coarser level present. Keys (level,
// cell) are radix-sorted with cub; cell ranges are found by binary search. Candidate pairs
// (within 25% of touching, as on the CPU) are emitted in a deterministic order (count,
// scan, write) and turned into a per-body partner list (CSR, partners ascending) by a
// second sort.
//
// Resolution is conflict-free (no two threads write one body, no atomics on bodies, so the
// results are bitwise the same run to run). Impulses go by matchings: each body picks its
// overlapping, approaching partner of smallest index, and mutual picks exchange the
// impulse, both bodies at once, so every impulse keeps momentum and (e = 1) kinetic energy
// exactly, as on the CPU; one matching per pass. The push-apart is Jacobi-style: each
// body gathers the shifts all its contacts ask of it from the positions at the start of
// the pass (the pair function evaluated on both sides in canonical order, so both see the
// same numbers). The CPU handler is Gauss-Seidel over all pairs instead: the same model,
// different iterates. Merging uses the same matching (into the smaller id); the dead are
// compacted away (stable) and the search is run again before the next round.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/cuda/device_buffer.cuh"
#include "core/cuda/vec4.cuh"
#include "nbody/collisions.hpp"

namespace nbody::cuda_collisions {

using gpu::DeviceBuffer;
struct Extent;

/// The bodies as the engine sees them (device pointers, n entries each). Accelerations and
/// the time-step bins of hierarchical steps are compacted along when bodies merge (may be
/// null). With `ready_bin` >= 0 the bins are a gate (nbody::ContactGate): only pairs of two
/// bodies of that bin are candidates, and every body found overlapping another gets
/// kContactFlag in its bin byte.
struct BodyArrays {
  double *x = nullptr, *y = nullptr, *z = nullptr;
  double *vx = nullptr, *vy = nullptr, *vz = nullptr;
  double *m = nullptr, *r = nullptr;
  std::uint64_t* id = nullptr;
  double *ax = nullptr, *ay = nullptr, *az = nullptr;
  std::uint8_t* bin = nullptr;
  int ready_bin = -1;
  // Test particles: bodies [n_active, n) are; an active body survives a merge with one.
  unsigned n_active = 0xffffffffu;
};

class CollisionEngine {
 public:
  explicit CollisionEngine(const CollisionOptions& options);
  ~CollisionEngine();
  CollisionEngine(const CollisionEngine&) = delete;
  CollisionEngine& operator=(const CollisionEngine&) = delete;

  [[nodiscard]] CollisionModel model() const { return options_.model; }

  /// One collision stage on n bodies: detection, then options.iterations passes (bounce)
  /// or merge rounds. Merges compact `bodies` in place and lower n. Synchronises `stream`.
  CollisionStats resolve(BodyArrays bodies, std::size_t& n, cudaStream_t stream);

  /// The candidate pairs (i < j) with |x_i - x_j| < (r_i + r_j)(1 + skin), sorted: the
  /// detection alone (for tests and tools).
  std::vector<IndexPair> find_pairs(BodyArrays bodies, std::size_t n, double skin,
                                    cudaStream_t stream);

 private:
  /// The energy sums of a stage, each reduced from per-body terms.
  enum Sum : int { kSumKinetic, kSumPotentialBefore, kSumPotentialAfter, kSumMergeLoss, kSums };
  /// sums_[k] = the sum of terms_[0, n) (cub: the same order, so the same bits, every run).
  void sum_terms(std::size_t n, Sum k, cudaStream_t stream);
  /// Fills the CSR partner lists of the n bodies; returns the number of pairs.
  std::size_t detect(const BodyArrays& b, std::size_t n, double skin, cudaStream_t stream);
  /// The tree search (collision_tree_detect.cu): Morton keys of the bodies into keys_ and
  /// index_ (sorted by detect()), each sorted body's search level, and its pairs.
  void tree_keys(const BodyArrays& b, std::size_t n, const Extent* extent, cudaStream_t stream);
  void tree_levels(const BodyArrays& b, std::size_t n, double skin, cudaStream_t stream);
  void emit_tree_pairs(const BodyArrays& b, std::size_t n, double skin, unsigned capacity,
                       cudaStream_t stream);
  /// Removes the bodies alive_ marks dead (stable); returns how many are left.
  std::size_t compact(BodyArrays b, std::size_t n, cudaStream_t stream);
  void scratch(std::size_t bytes);

  CollisionOptions options_;
  DeviceBuffer<double> bounds_;  // lo x y z, hi x y z, r min > 0, r max
  DeviceBuffer<double> grid_;    // lo x y z, h0, levels
  DeviceBuffer<unsigned long long> keys_, keys_sorted_;
  DeviceBuffer<unsigned char> tree_shift_;  // tree search: each sorted body's level
  DeviceBuffer<unsigned> index_, index_sorted_;
  DeviceBuffer<unsigned long long> pairs_, directed_, directed_sorted_;
  std::size_t pair_capacity_ = 0;
  DeviceBuffer<unsigned> partner_offset_;
  DeviceBuffer<gpu::Vec4<double>> packed_;  // bounce passes: (x y z r), (vx vy vz m), next x, v
  DeviceBuffer<int> choice_;
  DeviceBuffer<unsigned char> alive_;
  DeviceBuffer<double> compact_;            // compaction staging
  DeviceBuffer<unsigned long long> stats_;  // contacts, merges, max overlap bits
  DeviceBuffer<double> terms_;              // per-body energy terms of one sum
  DeviceBuffer<double> third_;              // merges under gravity: the others' W change
  DeviceBuffer<double> sums_;               // the Sum values
  DeviceBuffer<unsigned> total_;
  DeviceBuffer<unsigned char> temp_;
  std::size_t temp_bytes_ = 0;
  unsigned long long* host_ = nullptr;  // pinned copies of stats_ / counts
  double* host_sums_ = nullptr;         // pinned copy of sums_
};

}  // namespace nbody::cuda_collisions
