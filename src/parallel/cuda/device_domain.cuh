#pragma once
// The domain decomposition of GPU ranks (issue 35, docs/distributed.md part 2): the device
// side of parallel/domain.hpp. Every rank's float64 state stays on its GPU; before each
// force evaluation that may reorder the bodies, update():
//   1. every rank's bodies' bounding box, all-gathered: the root box of every rank's tree
//      (root_box()), so all ranks build cells of one global tree, one process's tree;
//   2. keys: each body's Morton key in the cube of the last cut (the cuts are cell
//      boundaries of that step's tree, as GADGET's domains are unions of its top nodes: no
//      cell is split between ranks while the grid stays);
//   3. a new cut (domain.hpp's balance(), its histograms summed on the device and
//      all-reduced: device_cuts.cu; no key leaves the GPU) at the first call, when the grid
//      has moved under the cuts by 1e-4 of the root (escaping bodies widen it slowly), and
//      when the last evaluation's measured force time is out of balance by more than
//      DomainOptions::recut_imbalance. Each body's cost is its interactions of the last walk
//      times its rank's seconds per interaction, so the cut balances time, not interactions
//      (the ranks' walks differ in seconds per interaction);
//   4. migration: the bodies whose keys another rank owns are packed into 104-byte records
//      (a stable sort by destination), sent by NCCL (ForceReducer::exchange_device) after
//      one small host exchange of the counts; arrivals fill the leavers' holes, bodies from
//      the end fill the holes left over, everyone else stays where it was (no O(N) reorder).
//      In rounds of at most kMigrationRound leavers a rank, so that the first migration (half
//      of every rank's bodies) needs buffers of a round, not of half the bodies.
//   In debug builds a census of the ids (count, sum, xor over all ranks) is checked around
//   every migration.
#include <cuda_runtime.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/cuda/device_buffer.cuh"
#include "core/cuda/event_marks.cuh"
#include "nbody/distributed.hpp"
#include "parallel/domain.hpp"
#include "parallel/domain_gravity.hpp"

namespace nbody::parallel {

/// The per-body arrays of a rank's device state, all of them moved by a migration: x y z,
/// vx vy vz, ax ay az, m, r (float64; r may be null where no body has a radius, the same on
/// every rank), the ids, and the work of the last walk (float, may be null: then every body
/// counts 1).
inline constexpr int kMigratedDoubles = 11;
/// The most bodies a rank sends in one round of a migration (DomainOptions::migration_round):
/// 2^22 records of 104 bytes, 436 MB each way, where half of 2^29 bodies (the first
/// migration of a billion-body run on 2 GPUs) would need 28 GB each way at once.
inline constexpr std::size_t kMigrationRound = std::size_t(1) << 22;
struct DeviceBodies {
  std::array<gpu::DeviceBuffer<double>*, kMigratedDoubles> doubles{};
  gpu::DeviceBuffer<std::uint64_t>* id = nullptr;
  gpu::DeviceBuffer<float>* work = nullptr;
  // Room update() may use for the bodies' keys (the tree's sort input, free until its next
  // build: 8 bytes a body the domain need not hold); too small or null: its own.
  std::uint64_t* key_room = nullptr;
  std::size_t key_room_capacity = 0;
};

/// The device and pinned arrays of the cuts' histogram rounds (device_cuts.cu).
struct CutScratch {
  gpu::DeviceBuffer<std::uint64_t> cells;
  gpu::DeviceBuffer<double> histogram;
  gpu::PinnedBuffer<double> host;
};

class DeviceDomain {
 public:
  DeviceDomain(std::shared_ptr<ForceReducer> comm, int dim, DomainOptions options = {});
  ~DeviceDomain();
  DeviceDomain(const DeviceDomain&) = delete;
  DeviceDomain& operator=(const DeviceDomain&) = delete;

  /// This rank's last force evaluation: its seconds and interactions (< 0: none yet).
  struct Work {
    double seconds = -1, interactions = -1;
  };
  /// Collective. Sends every body to its owner (above); `n` is this rank's count before and
  /// after. Grows the arrays (keeping their contents) when arrivals need room.
  void update(const DeviceBodies& bodies, std::size_t& n, Work work, cudaStream_t stream);
  /// Collective. The root box again, from the bodies where they are now, with no cut and no
  /// migration (block steps' substeps: the bins are in the bodies' order). Only x, y, z read.
  void refresh_root_box(const DeviceBodies& bodies, std::size_t n, cudaStream_t stream);
  /// The root box of every rank's tree (physical units), the same bits on every rank.
  void root_box(double (&lo)[3], double (&hi)[3]) const;
  /// How far this step's root cube is from the cut's (centre and half, over the cut's half).
  [[nodiscard]] double misalignment() const;
  [[nodiscard]] const DomainStats& stats() const { return stats_; }
  /// After the stream's synchronisation, the parts of the updates since the last call (ms,
  /// CUDA events: host waits included): the bounds (and the last imbalance), the keys (or
  /// a cut), the migration. Empty when there was none.
  [[nodiscard]] std::vector<std::pair<std::string, double>> take_phase_ms();

 private:
  /// Every rank's bodies' bounds into lo/hi; false when no rank has a body.
  bool global_bounds(const DeviceBodies& bodies, std::size_t n, double (&lo)[3], double (&hi)[3],
                     cudaStream_t stream);
  /// seconds_per_interaction > 0: the bodies' work is of an evaluation (else each counts 1).
  void cut(const DeviceBodies& bodies, std::size_t n, const double (&lo)[3], const double (&hi)[3],
           double seconds_per_interaction, cudaStream_t stream);
  void compute_keys(const DeviceBodies& bodies, std::size_t n, cudaStream_t stream);
  void migrate(const DeviceBodies& bodies, std::size_t& n, cudaStream_t stream);
  /// One round: at most `limit` leavers of this rank sent; `most` the most sent or received
  /// in a round so far. Whether some rank held leavers back (then another round).
  bool migrate_round(const DeviceBodies& bodies, std::size_t& n, std::size_t limit,
                     std::size_t& most, cudaStream_t stream);
  void scratch(std::size_t bytes);

  std::shared_ptr<ForceReducer> comm_;
  int dim_;
  DomainOptions options_;
  DomainCuts cuts_;
  KeyCube cube_;
  double box_lo_[3] = {}, box_hi_[3] = {};  // this step's root box
  int since_cut_ = 0;                       // evaluations since the last cut
  int cuts_made_ = 0;                       // cuts so far
  bool have_cut_ = false;
  DomainStats stats_;
  gpu::DeviceBuffer<std::uint64_t> own_keys_, first_;
  std::uint64_t* keys_ = nullptr;  // this update's: b.key_room or own_keys_
  gpu::DeviceBuffer<unsigned> leaving_, sorted_leaving_, dest_sorted_, tail_;
  gpu::DeviceBuffer<unsigned char> flags_;
  gpu::DeviceBuffer<unsigned> counts_;  // per destination, then the selection counts
  gpu::DeviceBuffer<double> send_, recv_, bounds_;
  gpu::DeviceBuffer<unsigned long long> census_;
  gpu::DeviceBuffer<unsigned char> temp_;
  std::size_t temp_bytes_ = 0;
  gpu::PinnedBuffer<unsigned> counts_host_;
  gpu::PinnedBuffer<double> bounds_host_;
  gpu::PinnedBuffer<unsigned long long> census_host_;
  CutScratch cut_scratch_;
  gpu::EventMarks<4> phase_;  // update(): begin, bounds, keys, migrated
  bool timed_ = false;
};

}  // namespace nbody::parallel
