#pragma once
// The Barnes-Hut tree on the GPU (octree in 3D, quadtree in 2D): the six stages of
// M. Burtscher and K. Pingali, "An Efficient CUDA Implementation of the Tree-Based Barnes
// Hut n-Body Algorithm" (GPU Computing Gems, Emerald Edition, 2011), each its own timed
// kernel group, with the build done from Morton-sorted bodies instead of lock-based
// insertion:
//
//   bbox       bounding box of the bodies (cub::DeviceReduce)
//   sort       Morton keys, cub radix sort, bodies gathered into tree order
//   build      top-down, one kernel per level: a cell of more than kLeafSize bodies
//              splits at the next key digit, its children's body ranges found by binary
//              search on the sorted keys, their slots taken with one atomicAdd
//   summarise  bottom-up, one kernel per level: mass, centre of mass (and quadrupole,
//              b_max for --mac bmax); then the walk groups (as the CPU tree's make_groups)
//   force      one warp per group of <= 128 tree-ordered bodies (4 per lane): the warp
//              tests 32 cells at a time against the group's box, collects accepted
//              cells and opened leaves in shared memory, evaluates them when 32 are ready
//
// No stage waits on another block: the levels are separate launches, the only
// inter-block communication is atomicAdd (cell slots, the group counter) and a "last
// block" ticket that writes a level's end, never a spin on a flag. Hence no deadlock on
// any GPU, whatever the scheduler does (a lock-based build and a ready-flag summarisation,
// as in Burtscher and Pingali's, spin on other blocks and can hang on Volta and later).
//
// Determinism: cells of a level land in an order set by atomics, but every cell's
// children are stored in key-digit order and the walk follows the links, so a group's
// interaction list, and so its sums, depend only on the bodies: repeated runs give the
// same bits.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/device_buffer.cuh"
#include "core/cuda/vec4.cuh"
#include "gravity/cuda/device_forces.cuh"
#include "nbody/gravity.hpp"
#include "tree/cuda/tree_gpu_sources.cuh"
#include "tree/cuda/tree_gpu_view.cuh"

namespace nbody::cuda_tree {

// Stages (tree_gpu_build.cu, tree_gpu_walk.cu). Each launches on `stream` and checks.
template <class Real>
void launch_keys(const TreeView<Real>& t, cudaStream_t stream);
template <class Real>
void launch_gather(const TreeView<Real>& t, cudaStream_t stream);
template <class Real>
void launch_build(const TreeView<Real>& t, cudaStream_t stream);
/// grow: a refit's, each cell's box first grown to the smallest cube holding its old box and
/// its bodies' (children's) boxes now.
template <class Real>
void launch_moments(const TreeView<Real>& t, bool quadrupole, cudaStream_t stream,
                    bool grow = false);
template <class Real>
void launch_group_count(const TreeView<Real>& t, unsigned cells, cudaStream_t stream);
template <class Real>
void launch_group_write(const TreeView<Real>& t, unsigned cells, cudaStream_t stream);

struct WalkParams {
  double theta = 0.5;
  bool quadrupole = false;
  bool potential = false;  // also each body's potential, in out[].w (DeviceForces::launch)
};
/// Warps the walk runs at once (its grid is persistent): the stacks hold this many.
template <class Real>
unsigned walk_warps(bool quadrupole, int dim);
/// The most blocks of the Mac variants (tree_gpu_walk_mac.cu), for walk_warps.
template <class Real>
unsigned mac_walk_blocks();
/// The walk with t.bmax (bmax criterion) or t.a_old (relative) set: launch_walk's (Active:
/// launch_active_walk's) kernel with the Mac test (tree_gpu_walk_mac.cu); those call it.
template <class Real>
void launch_mac_walk(const TreeView<Real>& t, const WalkParams& p, Real eps2, int* stacks,
                     Vec4<Real>* out, cudaStream_t stream, bool active);
template <class Real>
void launch_walk(const TreeView<Real>& t, const WalkParams& p, Real eps2, int* stacks,
                 Vec4<Real>* out, cudaStream_t stream);
/// The walk of the active bodies alone (t.active_pos: their tree positions, ascending;
/// t.active_groups: each group's range in it), out[] for them only: the full walk's kernels,
/// each group tested with its whole box (an active body meets the full walk's cells).
template <class Real>
void launch_active_walk(const TreeView<Real>& t, const WalkParams& p, Real eps2, int* stacks,
                        Vec4<Real>* out, cudaStream_t stream);
/// The GPU tree behind DeviceForces: owns every buffer (grown, never shrunk; the build is
/// redone with twice the cells when they overflow), times each stage with CUDA events.
template <class Real>
class TreeForces final : public cuda_gravity::DeviceForces<Real> {
 public:
  /// mac: the opening criterion (physics/opening_criterion.hpp); the relative one (alpha)
  /// opens by theta when the caller gave no old_accelerations() for the launch.
  /// build: Morton keys and a sort (default) or the seeds' insertion with locks; the same
  /// tree either way.
  TreeForces(int dim, double theta, bool quadrupole,
             OpeningCriterion mac = OpeningCriterion::Geometric, double alpha = 0.001,
             TreeBuild build = TreeBuild::Morton);
  ~TreeForces() override;

  [[nodiscard]] std::size_t padded(std::size_t n) const override { return n; }
  /// Throws nbody::Error from 2^31 bodies (32-bit body indices).
  void check_size(std::size_t n) const override;
  void reserve(std::size_t n) override;
  [[nodiscard]] Vec4<Real>* bodies() const override { return bodies_.data(); }
  /// The forces: over the packed bodies (read by then) with the Morton build's tree-order walk.
  [[nodiscard]] Vec4<Real>* out() const override;
  /// The relative criterion: the buffer for the next launch's |a_old| / G (null otherwise).
  [[nodiscard]] Real* old_accelerations(std::size_t n) override;
  void launch(std::size_t n, Real eps, cudaStream_t stream, bool potential) override;
  /// The tree of all n bodies, built as launch() builds it, then the walk of the active bodies
  /// alone (tree positions compacted by cub::DeviceSelect, each group cut down to its active
  /// bodies, walked with the whole group's box: launch()'s lists and forces). out(): the active
  /// bodies, body order. With shares: each process walks its chunks' active bodies; exchange()
  /// gathers every chunk. Rebuilt, not refitted (tree_gpu_active.cu).
  void launch_active(std::size_t n, Real eps, cudaStream_t stream, bool potential,
                     const unsigned* active, std::size_t n_active) override;
  /// The next launch_active() refits the last build (tree_gpu_active.cu) when it was a Morton
  /// build of the same n; refits() counts the launches that did.
  void allow_refit(bool ok) override { refit_allowed_ = ok; }
  [[nodiscard]] std::uint64_t refits() const { return refits_; }
  /// The shares do not overlap: each process packs the accelerations of its dealt chunks (tree
  /// order, 3 values per body, 4 with the last launch's potentials) and one all-gather brings
  /// every chunk to every process: 3 (4) values per body once, not 4 twice (an all-reduce).
  void exchange(ForceReducer& reducer, std::size_t n, cudaStream_t stream) override;
  /// Every process builds the same tree; each walks the groups of its share of the bodies.
  bool set_share(int part, int parts) override {
    part_ = part;
    parts_ = parts;
    return true;
  }
  [[nodiscard]] std::string name() const override;
  [[nodiscard]] std::vector<std::pair<std::string, double>> stage_ms() const override;
  [[nodiscard]] double interactions_per_body() const override;
  [[nodiscard]] unsigned groups() const { return host_counters_[2]; }  // last launch's walk groups
  /// The seeds' "without kernel 4": launch() walks groups of kMaxGroup consecutive input-order
  /// bodies (each its own box); not with the relative criterion (reads t.groups).
  void set_input_order_walk(bool input);
  [[nodiscard]] std::vector<CellLink> cells() const;  // the last build's, copied back: tests
  /// Issue 35: launch() = build_only + walk_sources(own); old accelerations given serve
  /// every walk of this build.
  void build_only(std::size_t n, cudaStream_t stream);
  /// After build_only: the walks of this build (walk_sources) take the n_active listed bodies
  /// alone (body indices, ascending), as launch_active's; out() holds only theirs. The pieces
  /// (describe_bodies) then hold the bodies of the walk groups with an active body alone.
  void select_active(std::size_t n, const unsigned* active, std::size_t n_active,
                     cudaStream_t stream);
  /// The built tree's groups against its own cells (foreign null) or foreign ones; accumulate:
  /// out() +=. Interactions sum over the walks of one build.
  void walk_sources(std::size_t n, Real eps, cudaStream_t stream, bool potential,
                    const TreeSources<Real>* foreign, bool accumulate);
  /// The received essential trees (essential_sources of each buffer), each walked as foreign
  /// sources adding to out(); merge: joined under a root of their own and walked once
  /// (tree_gpu_merge.cu; NBODY_DOMAIN_MERGE, an experiment).
  void walk_received(std::size_t n, Real eps, cudaStream_t stream, bool potential,
                     const std::vector<TreeSources<Real>>& received, bool merge);
  void record_costs(float* cost) { cost_ = cost; }  // walks add each body's list entries
  [[nodiscard]] const Bounds* bounds_device() const { return bounds_.data(); }  // last build's
  [[nodiscard]] const Vec4<Real>* sorted() const { return sorted_.data(); }     // tree order
  [[nodiscard]] const unsigned* order() const { return order_.data(); }         // tree pos -> body
  /// The sort's second key buffer, free between builds: a decomposed run's domain keys borrow
  /// it (8 bytes a body it need not hold).
  [[nodiscard]] unsigned long long* spare_keys() const {
    if (build_ == TreeBuild::Insertion) return keys_tmp_.data();
    return reinterpret_cast<unsigned long long*>(sorted_.data());
  }
  [[nodiscard]] std::size_t spare_key_capacity() const {
    if (build_ == TreeBuild::Insertion) return keys_tmp_.capacity();
    return sorted_.capacity() * sizeof(Vec4<Real>) / sizeof(unsigned long long);
  }
  void set_root_box(const Bounds* box);  // later builds' root cube as for bodies of this box
  /// Collective, after build_only (tree_gpu_shared_top.cu): the shared top tree of a decomposed
  /// run (parallel/shared_top_tree.hpp). The cells whose key range meets another rank's span
  /// of keys are taken to the host and all-gathered; each that other ranks hold part of gets
  /// the global cell's moments, and is marked for the walks and the essential trees (which
  /// ship these cells opened, never pruned) as added by this rank's copy or by another's.
  /// Unlike the CPU ranks', a cell one rank holds as a leaf is not split there (the device
  /// tree's cells are laid out by level): the cells of the others below it keep their parts'
  /// moments, every body still counted once. Returns the cells shared. launch_top_span first
  /// queues the rank's span of keys on s, so that the host can wait for it alone while the
  /// stream goes on (with the pieces' kernels); the candidates are then found on `side` (null:
  /// s), the shared cells written on s, with no wait at the end.
  void launch_top_span(cudaStream_t s);
  std::size_t share_top_cells(ForceReducer& comm, cudaStream_t s, cudaStream_t side = nullptr);
  /// The last share_top_cells' candidate cells on this rank and those it shared.
  [[nodiscard]] std::pair<std::size_t, std::size_t> top_cells() const {
    return {top_candidates_, top_cells_shared_};
  }
  /// After build_only (tree_gpu_receiver.cu): the built tree's bodies in pieces for the other
  /// ranks, the cells of at most `piece_bodies` bodies whose parent has more (a_old: body
  /// order, for their smallest |a_old|; one sync). launch_describe queues the kernels alone;
  /// describe_bodies then waits for them (for `queued`, an event after them, when given).
  void launch_describe(const Real* a_old, unsigned piece_bodies, PieceScratch& scratch,
                       cudaStream_t s) const;
  /// The pieces near the root's centre of mass (issue 35; decomposed runs take
  /// parallel::piece_split_from, NBODY_DOMAIN_PIECE_SPLIT): 0 as before; 1 splits a cell of at most
  /// piece_bodies that holds or borders it down to its walk groups; 2 also keeps its small children
  /// out of runs (a walk group may then span two pieces, and use the cells both accepted whole).
  void set_piece_split(int mode) { piece_split_ = mode; }
  std::vector<BodyPiece> describe_bodies(const Real* a_old, unsigned piece_bodies,
                                         PieceScratch& scratch, cudaStream_t s,
                                         cudaEvent_t queued = nullptr) const;
  /// After build_only (tree_gpu_essential.cu): each receiver's essential tree size (one sync),
  /// the union of its boxes' trees. Flat: one box a receiver.
  std::vector<EssentialCounts> count_essential(
      const std::vector<std::vector<ReceiverBox<Real>>>& boxes, const WalkParams& p,
      cudaStream_t s);
  std::vector<EssentialCounts> count_essential(const std::vector<ReceiverBox<Real>>& boxes,
                                               const WalkParams& p, cudaStream_t s);
  /// Receiver k's essential tree into `packed` (essential_bytes(counts[k]) bytes, device,
  /// aligned to sizeof(Vec4<Real>)), on the stream.
  void write_essential(std::size_t k, void* packed, cudaStream_t s);
  /// Bytes of a packed tree (box, com, quad when quadrupole, link, bmax when bmax, bodies), and
  /// the walk's view of one (received) buffer.
  [[nodiscard]] std::size_t essential_bytes(EssentialCounts c) const;
  [[nodiscard]] TreeSources<Real> essential_sources(const void* packed, EssentialCounts c) const;

 private:
  void reserve_cells(std::size_t cells);
  /// The active bodies' tree positions and each walk group's range of them (active_pos_,
  /// active_groups_) for this build; walked_ = n_active.
  void select_positions(std::size_t n, const unsigned* active, std::size_t n_active,
                        cudaStream_t stream);
  /// Runs `write_cells` (a build's stage that appends cells: the Morton split, the insertion
  /// build's layout), and again with half as much room again while it runs out of cell slots
  /// (the overflow flag, counter[1]); returns the cells used.
  template <class WriteCells>
  unsigned until_cells_fit(const WriteCells& write_cells, cudaStream_t stream) {
    for (;;) {
      write_cells();
      NBODY_CUDA_CHECK(cudaMemcpyAsync(host_counters_, counter_.data(), 2 * sizeof(unsigned),
                                       cudaMemcpyDeviceToHost, stream));
      NBODY_CUDA_CHECK(cudaStreamSynchronize(stream));
      if ((host_counters_[1] & 1u) == 0) return host_counters_[0];
      reserve_cells(std::max<std::size_t>(cell_capacity_ + cell_capacity_ / 2,
                                          std::size_t(host_counters_[0]) + 64));
    }
  }
  /// The Morton build's sort and build stages (events 1 to 3); returns the cells used.
  unsigned build_morton(std::size_t n, cudaStream_t stream);
  /// The insertion build's stages (events 1 to 3): keys and insertion ("build"), layout and
  /// placement ("sort"); returns the cells used.
  unsigned build_insertion(std::size_t n, cudaStream_t stream);
  void reserve_insertion(std::size_t n, std::size_t inner, std::size_t leaves);
  [[nodiscard]] InsertTree insert_view() const;
  /// The input-order walk's groups and inverse order (set_input_order_walk).
  void prepare_input_walk(TreeView<Real>& t, std::size_t n, cudaStream_t stream);
  /// bbox, sort, build, summarise for n bodies (events 0 to 4); returns the cells used.
  unsigned build(std::size_t n, cudaStream_t stream);
  /// The last build's cells at the bodies' new places (events 0 to 4: the gather in "sort",
  /// the grown boxes and the moments in "summarise"); the walk groups stay.
  void refit(std::size_t n, cudaStream_t stream);
  /// The walk's counters back to the host after the force stage (event 5).
  void copy_counters(cudaStream_t stream);
  void scratch(std::size_t bytes);
  void throw_if_failed() const;
  [[nodiscard]] TreeView<Real> view(std::size_t n) const;
  /// The walk's parameters, and in t the criterion's arrays (a_old: when given for this build).
  [[nodiscard]] WalkParams walk_params(TreeView<Real>& t, bool potential);
  /// The walk's interaction count, copied back after each launch.
  [[nodiscard]] unsigned long long* host_interactions() const {
    return reinterpret_cast<unsigned long long*>(host_counters_ + 4);
  }

  int dim_;
  int part_ = 0, parts_ = 1;
  double theta_;
  bool quadrupole_;
  OpeningCriterion mac_;
  double alpha_;
  TreeBuild build_;
  bool input_walk_ = false;
  unsigned cells_ = 0;        // cells of the last build
  bool a_old_given_ = false;  // old_accelerations() was called for the next launch
  bool potential_ = false;    // the last launch computed the potentials (exchange sends them)
  std::size_t n_ = 0;
  std::size_t walked_ = 0;  // bodies the last walk computed (n, or the active ones)
  std::size_t body_capacity_ = 0;
  std::size_t cell_capacity_ = 0;
  DeviceBuffer<Vec4<Real>> bodies_, out_, sorted_;
  // The sort's second buffers: the Morton build's live in sorted_ (sort_room), the insertion
  // build's in order_tmp_ and keys_tmp_ (its placement reads the keys as it writes sorted_).
  DeviceBuffer<unsigned> order_, order_tmp_;
  DeviceBuffer<Real> share_send_, share_recv_;  // exchange(): this process's chunks, everyone's
  DeviceBuffer<unsigned long long> keys_, keys_tmp_;
  DeviceBuffer<Bounds> bounds_;
  DeviceBuffer<unsigned> counter_, levels_, level_done_;
  DeviceBuffer<Vec4<Real>> box_, com_, quad_;
  DeviceBuffer<Real> bmax_, a_old_;  // mac bmax: per cell; relative: per body
  DeviceBuffer<CellLink> link_;
  DeviceBuffer<unsigned> group_count_, group_offset_;
  DeviceBuffer<Group> groups_;
  DeviceBuffer<unsigned> expensive_;
  DeviceBuffer<unsigned long long> interactions_;
  DeviceBuffer<int> stacks_;
  DeviceBuffer<unsigned char> active_flags_;  // launch_active: per body
  DeviceBuffer<unsigned> active_pos_, active_count_;
  DeviceBuffer<Group> active_groups_;
  // The insertion build's pointer tree (InsertTree) and its pool capacities.
  DeviceBuffer<int> ins_child_, ins_leaf_head_, ins_next_, ins_cell_node_;
  DeviceBuffer<unsigned> ins_inner_count_, ins_leaf_count_, ins_leaf_cell_, ins_leaf_of_, ins_pool_;
  std::size_t ins_inner_capacity_ = 0, ins_leaf_capacity_ = 0, ins_body_capacity_ = 0;
  DeviceBuffer<unsigned char> temp_;  // cub scratch
  std::size_t temp_bytes_ = 0;
  unsigned* host_counters_ = nullptr;  // pinned: 4 counters, then the interaction count
  bool a_old_use_ = false, cursors_fresh_ = false;  // a_old for this build; cursors just reset
  bool refit_allowed_ = false;                      // allow_refit(), for the next launch_active
  std::size_t built_n_ = 0;  // the bodies of the last build (0: none to refit)
  std::uint64_t refits_ = 0;
  bool active_walk_ = false;     // select_active for this build
  bool sort_from_room_ = false;  // the Morton sort starts in sorted_'s room (build_morton)
  DeviceBuffer<unsigned char> walked_groups_;  // select_active: per tree position
  bool root_box_set_ = false;
  Bounds root_box_{};
  float* cost_ = nullptr;    // record_costs
  bool top_shared_ = false;  // share_top_cells ran for this build: shared_ holds its marks
  bool decomposed_ = false;  // share_top_cells was called (P > 1): essential trees carry marks
  DeviceBuffer<unsigned char> shared_;  // per cell: the shared top tree's marks
  TopScratch top_;
  std::size_t top_candidates_ = 0, top_cells_shared_ = 0;
  int piece_split_ = 0;                 // set_piece_split
  EssentialScratch<Real> ess_;          // count_essential, write_essential
  DeviceBuffer<unsigned char> merged_;  // walk_received's joined tree
  void essential_flags(std::size_t batch, cudaStream_t s, bool count);  // 32 receivers, top down
  static constexpr int kStages = 5;
  cudaEvent_t events_[kStages + 1] = {};
};

}  // namespace nbody::cuda_tree
