#pragma once
// The forces of a GPU rank that owns its bodies (issue 35, docs/distributed.md part 2b), on
// the bodies the device stepper packed (scaled units, the same scaling on every rank):
// - the tree: the local tree of the owned bodies in the common root box (the domain's);
//   every rank's pieces (cells of its tree of about n/2048 bodies holding whole walk groups,
//   with their smallest |a_old| for the relative criterion; tree_gpu_receiver.cu)
//   all-gathered; for every other rank the locally essential tree of the local one against
//   its pieces' boxes (tree_gpu_essential.cu: the cells any box opens, the bodies of the
//   leaves they reach), counted, written and sent by NCCL on a second stream while the local
//   tree is walked on the SMs it leaves; then the local groups walk each received tree,
//   adding to their forces. Nothing of size N is held: the bodies, the tree and the
//   essential trees.
// - the direct sum: the bodies of all ranks gathered each step (16 bytes a body; the O(N^2)
//   work dwarfs the O(N) traffic at every N the direct sum is used for), the each-pair-once
//   kernel's tasks dealt over the ranks as in the replicated scheme, the partial forces
//   summed, each rank keeping its own block. The state itself stays owned. Ownership does not
//   change the work, so direct-sum bodies never migrate.
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/device_buffer.cuh"
#include "gravity/cuda/direct_kernels.cuh"
#include "nbody/distributed.hpp"
#include "nbody/error.hpp"
#include "nbody/simulation.hpp"
#include "parallel/domain_gravity.hpp"
#include "simulation/cuda/domain_timer.cuh"
#include "tree/cuda/tree_gpu.cuh"

namespace nbody::cuda_resident {

/// The GPU ranks re-cut on measured force time (device_domain.cuh) from 10 % out of balance
/// (DomainOptions' default). Measured on 2 H100s at 5 %: the time-weighted cuts moved
/// 790,000 bodies a step at 64M (a re-cut almost every step, 413 ms a step against 85 ms), so
/// the tolerance stays at 10 % until the cut converges better. The first cuts settle to 3 %
/// (NBODY_DOMAIN_SETTLING_IMBALANCE sets another): a cut sums its histograms on the device
/// (device_cuts.cu), so the extra cuts cost little. Measured on 2 H100s (16M per GPU), weak
/// scaling: 88.0 % at 10 %, 89.4 % at 3 % with cuts on the host, 93.7 % with both.
inline constexpr double kGpuSettlingImbalance = 1.03;
inline parallel::DomainOptions gpu_domain_options(const GravityOptions& g) {
  parallel::DomainOptions o;
  o.balance.max_bodies_per_rank = g.max_bodies_per_rank;
  const double settling =
      parallel::settling_imbalance_from(std::getenv("NBODY_DOMAIN_SETTLING_IMBALANCE"));
  o.settling_imbalance = settling > 0 ? settling : kGpuSettlingImbalance;
  o.migration_round = parallel::migration_round_from(std::getenv("NBODY_DOMAIN_MIGRATION_ROUND"));
  return o;
}

/// A rank describes its bodies to the others by cells of its tree of about n / this many
/// bodies (TreeForces::describe_bodies; each receives the union of their essential trees);
/// NBODY_DOMAIN_PIECES sets another (tuning).
constexpr std::size_t kPiecesPerRank = 2048;

template <class Real>
class DomainForces {
 public:
  DomainForces(cuda_gravity::DeviceForces<Real>& forces, std::shared_ptr<ForceReducer> comm,
               const GravityOptions& o)
      : tree_(dynamic_cast<cuda_tree::TreeForces<Real>*>(&forces)),
        direct_(dynamic_cast<cuda_direct::DirectForces<Real>*>(&forces)),
        comm_(std::move(comm)),
        options_(o),
        pieces_per_rank_(parallel::pieces_per_rank_from(std::getenv("NBODY_DOMAIN_PIECES"))) {
    if (pieces_per_rank_ == 0) pieces_per_rank_ = kPiecesPerRank;
    if (!tree_ && !direct_) throw Error("domain decomposition: no GPU tree or direct sum");
    if (direct_) sharing_ = direct_->set_share(comm_->part(), comm_->parts());
    if (tree_)
      tree_->set_piece_split(parallel::piece_split_from(std::getenv("NBODY_DOMAIN_PIECE_SPLIT")));
    merge_ = parallel::merge_received_from(std::getenv("NBODY_DOMAIN_MERGE"));
    // The work beside the local walk on a stream of its own, first in the block scheduler's
    // queue (its kernels mostly run after the walk, whose grid holds every SM: Part 2b).
    int least = 0, greatest = 0;
    NBODY_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    NBODY_CUDA_CHECK(cudaStreamCreateWithPriority(&comm_stream_, cudaStreamNonBlocking, greatest));
    NBODY_CUDA_CHECK(cudaEventCreateWithFlags(&received_, cudaEventDisableTiming));
  }
  ~DomainForces() {
    if (received_) cudaEventDestroy(received_);
    if (comm_stream_) cudaStreamDestroy(comm_stream_);
  }
  DomainForces(const DomainForces&) = delete;
  DomainForces& operator=(const DomainForces&) = delete;

  [[nodiscard]] bool is_tree() const { return tree_ != nullptr; }
  /// Room the domain's update may use for its keys until the next build (none: null).
  [[nodiscard]] std::uint64_t* key_room(std::size_t& capacity) const {
    capacity = tree_ ? tree_->spare_key_capacity() : 0;
    static_assert(sizeof(unsigned long long) == sizeof(std::uint64_t));
    return tree_ ? reinterpret_cast<std::uint64_t*>(tree_->spare_keys()) : nullptr;
  }
  /// Collective. Where the stepper packs its n bodies, and how many entries (padding with
  /// mass 0 included) it must write there.
  struct PackTarget {
    gpu::Vec4<Real>* bodies;
    std::size_t entries;
  };
  PackTarget prepare(std::size_t n) {
    n_ = n;
    if (tree_) {
      // With room to spare: migration changes n a little every step, and the tree's reserve()
      // reallocates every buffer when it grows.
      if (n > reserved_) tree_->reserve(reserved_ = n + n / 16 + 1024);
      return {tree_->bodies(), n};
    }
    // The direct sum: equal blocks of the largest rank's count (NCCL's all-gather).
    std::size_t most = n;
    for (const auto& b : comm_->all_gather(bytes_of(double(n)))) most = std::max(most, size_of(b));
    block_ = std::max<std::size_t>(most, 1);
    local_.reserve(block_, "this rank's bodies (direct sum)");
    direct_->reserve(block_ * std::size_t(comm_->parts()));
    return {local_.data(), block_};
  }

  /// Collective. The forces of the n packed bodies into out() (their order), with the
  /// potentials in .w when `potential`; a_old: the relative criterion's |a_old| / G of the
  /// packed bodies (null: none this evaluation). The tree: `root` the root box of every
  /// rank's tree (scaled units, the same on every rank), `work` (per body, may be null) gets
  /// each body's interactions added. `active` (device, ascending body indices; may be null):
  /// the tree walks those n_active bodies alone, out() holds theirs, and the pieces describe
  /// their walk groups (block steps' substeps: every rank takes part, with or without active
  /// bodies). The direct sum computes every body.
  void launch(Real eps, cudaStream_t stream, bool potential, const Real* a_old, float* work,
              const cuda_tree::Bounds* root, const unsigned* active = nullptr,
              std::size_t n_active = 0) {
    bytes_sent_ = 0;
    walked_ = active ? n_active : n_;
    if (tree_) {
      launch_tree(eps, stream, potential, a_old, work, root, active, n_active);
    } else {
      launch_direct(eps, stream, potential);
    }
  }
  /// This rank's forces, in the order of its packed bodies.
  [[nodiscard]] gpu::Vec4<Real>* out() const {
    return tree_ ? tree_->out() : direct_->out() + std::size_t(comm_->part()) * block_;
  }
  /// This rank's interactions of the last launch (after the stream's synchronisation).
  [[nodiscard]] double work() const {
    return tree_ ? tree_->interactions_per_body() * double(walked_)
                 : double(n_) * double(block_ * std::size_t(comm_->parts()));
  }
  [[nodiscard]] std::uint64_t bytes_sent() const { return bytes_sent_; }

  /// After the stream's synchronisation, the tree's last evaluation: its force stage in parts
  /// (DomainTimer) added to `stages`, and to `d` the exchange's seconds with those the step
  /// did not wait for. With NBODY_DOMAIN_TRACE set, a line on stderr per rank and
  /// evaluation: the essential trees' sizes, the parts' times and the interactions per body
  /// of the local and received trees.
  template <class Stages>
  void report(Stages& stages, DecompositionStats& d) const {
    for (const auto& [stage, ms] : timer_.stages()) stages.add(stage, ms * 1e-3);
    for (const auto& [part, ms] : timer_.beside()) d.beside.add(part, ms * 1e-3);
    const auto [exchange, hidden] = timer_.exchange_and_hidden();
    d.exchange_seconds += 1e-3 * exchange;
    d.hidden_seconds += 1e-3 * hidden;
    trace();
  }
  /// Of the force time, what this rank may have spent waiting for the others.
  [[nodiscard]] double wait_ms() const { return tree_ ? timer_.wait_ms() : 0.0; }
  void trace() const {  // NBODY_DOMAIN_TRACE
    if (!trace_ || !tree_ || !timer_.recorded()) return;
    std::string parts;
    for (const auto& [name, ms] : timer_.stages()) parts += fmt::format(" {} {:.2f}", name, ms);
    parts += " | beside:";
    for (const auto& [name, ms] : timer_.beside()) parts += fmt::format(" {} {:.2f}", name, ms);
    const auto [exchange, hidden] = timer_.exchange_and_hidden();
    const double all = tree_->interactions_per_body();
    const auto [candidates, shared] = tree_->top_cells();
    std::fprintf(stderr,
                 "domain rank %d: n %zu | top cells %zu candidates %zu shared | sent %u cells "
                 "%u bodies, received %u cells %u bodies, "
                 "%.1f MB out | ms:%s | exchange %.2f (hidden %.2f) | interactions per body "
                 "%.0f local %.0f received\n",
                 comm_->part(), n_, candidates, shared, sent_.cells, sent_.bodies,
                 received_counts_.cells, received_counts_.bodies, 1e-6 * double(bytes_sent_),
                 parts.c_str(), exchange, hidden, local_interactions_, all - local_interactions_);
  }

 private:
  /// A receiver's boxes from the pieces it described (BodyPiece). The relative criterion: a
  /// piece's smallest |a_old|, but not below a quarter of its mean. A body nearer |a| = 0 (a
  /// system's centre) gets the remote cells this floor allows (the walk uses a pruned cell's
  /// moments when it would open it), instead of every rank shipping nearly its whole tree
  /// for that one body.
  std::vector<cuda_tree::ReceiverBox<Real>> receiver_of(const ForceReducer::Bytes& b,
                                                        bool relative) const {
    using cuda_tree::BodyPiece;
    std::vector<cuda_tree::ReceiverBox<Real>> boxes(b.size() / sizeof(BodyPiece));
    for (std::size_t k = 0; k < boxes.size(); ++k) {
      BodyPiece p;
      std::memcpy(&p, b.data() + k * sizeof p, sizeof p);
      const double a = relative ? options_.alpha * std::max(p.a_min, 0.25 * p.a_mean) : 0.0;
      boxes[k] = box_of(p.lo, p.hi, Real(a));
    }
    return boxes;
  }
  static cuda_tree::ReceiverBox<Real> box_of(const double* lo, const double* hi, Real alpha_a) {
    cuda_tree::ReceiverBox<Real> box{Real(0.5 * (lo[0] + hi[0])), Real(0.5 * (lo[1] + hi[1])),
                                     Real(0.5 * (lo[2] + hi[2])), Real(0.5 * (hi[0] - lo[0])),
                                     Real(0.5 * (hi[1] - lo[1])), Real(0.5 * (hi[2] - lo[2]))};
    box.alpha_a = alpha_a;
    return box;
  }
  static ForceReducer::Bytes bytes_of(double v) {
    ForceReducer::Bytes b(sizeof v);
    std::memcpy(b.data(), &v, sizeof v);
    return b;
  }
  static std::size_t size_of(const ForceReducer::Bytes& b) {
    double v = 0;
    if (b.size() != sizeof v) throw Error("domain decomposition: a rank sent a malformed count");
    std::memcpy(&v, b.data(), sizeof v);
    return std::size_t(v);
  }

  void launch_direct(Real eps, cudaStream_t stream, bool potential) {
    const std::size_t parts = std::size_t(comm_->parts()), total = block_ * parts;
    comm_->gather_device(local_.data(), direct_->bodies(), 4 * block_, std::is_same_v<Real, double>,
                         stream);
    const std::size_t padded = direct_->padded(total);
    if (padded > total)
      NBODY_CUDA_CHECK(cudaMemsetAsync(direct_->bodies() + total, 0,
                                       (padded - total) * sizeof(gpu::Vec4<Real>), stream));
    direct_->launch(total, eps, stream, potential);
    if (sharing_)
      comm_->sum_device(direct_->out(), 4 * padded, std::is_same_v<Real, double>, stream);
    bytes_sent_ = (parts - 1) * block_ * sizeof(gpu::Vec4<Real>) +
                  (sharing_ ? 2 * padded * sizeof(gpu::Vec4<Real>) * (parts - 1) / parts : 0);
  }

  void launch_tree(Real eps, cudaStream_t stream, bool potential, const Real* a_old, float* work,
                   const cuda_tree::Bounds* root, const unsigned* active, std::size_t n_active) {
    using cuda_tree::BodyPiece;
    using cuda_tree::EssentialCounts;
    const int parts = comm_->parts(), me = comm_->part();
    tree_->record_costs(work);
    // The local tree; this rank's bodies in pieces, cells of its tree (describe_bodies:
    // compact, not reaching into another domain), each with its box and smallest |a_old| (a
    // sender ships the union of their essential trees; one box for all would take the
    // domain's smallest |a_old|, near a system's centre |a| -> 0, and span its outliers).
    const unsigned piece = unsigned(std::max<std::size_t>(n_ / pieces_per_rank_, 1));
    if (n_ > 0) {
      tree_->set_root_box(root);
      tree_->build_only(n_, stream);
      if (active) tree_->select_active(n_, active, n_active, stream);
    }
    timer_.mark(DomainTimer::Begin, stream);
    // The rank's span of keys for the shared top tree, then the pieces' kernels (they read
    // the tree's links and bodies, not the moments the top tree writes), so that the GPU runs
    // them while the host waits for the others' spans and candidates.
    if (n_ > 0 && parts > 1) tree_->launch_top_span(stream);
    if (n_ > 0) tree_->launch_describe(a_old, piece, pieces_, stream);
    timer_.mark(DomainTimer::Described, stream);
    // The cells other ranks' bodies share get the global cell's moments, so that every rank
    // opens and accepts them as one process does (parallel/shared_top_tree.hpp). Its
    // candidates are found on the exchange's stream, first in the block scheduler's queue.
    tree_->share_top_cells(*comm_, stream, comm_stream_);
    timer_.mark(DomainTimer::Top, stream);
    // The walk of the local tree; beside the walk, on the host and
    // the exchange's stream: the pieces taken to the host (when their kernels are done, not
    // the walk) and all-gathered, the essential trees counted, their sizes exchanged, the
    // trees written and sent. Measured on 2 H100s at 64M (docs/distributed.md, Part 2b):
    // all of that before the walk cost 3.5 ms a step more (the host collectives left the GPU
    // idle). The kernels beside the walk run after it (its persistent grid holds every SM):
    // 3.3 ms of wait then. Not won back by leaving 8 SMs to them, nor by a walk in slices that
    // yield the SMs to the count and the write (a device flag stopped it too late, a pinned
    // one made it 3.5x slower; the count on the whole GPU took 2-4 ms, the wait it saved).
    if (n_ > 0) tree_->walk_sources(n_, eps, stream, potential, nullptr, false);
    timer_.mark(DomainTimer::Walked, stream);
    std::vector<BodyPiece> pieces;
    if (n_ > 0)  // waits for the pieces' kernels alone
      pieces = tree_->describe_bodies(a_old, piece, pieces_, stream,
                                      timer_.event(DomainTimer::Described));
    ForceReducer::Bytes out(pieces.size() * sizeof(BodyPiece));
    if (!pieces.empty()) std::memcpy(out.data(), pieces.data(), out.size());
    const auto described = comm_->all_gather(out);
    std::vector<std::vector<cuda_tree::ReceiverBox<Real>>> receivers;
    std::vector<int> receiver_rank;
    for (int p = 0; p < parts; ++p) {
      const ForceReducer::Bytes& b = described[std::size_t(p)];
      if (b.size() % sizeof(BodyPiece) != 0)
        throw Error("domain decomposition: a rank sent a malformed description of its bodies");
      if (p == me || n_ == 0 || b.empty()) continue;
      receivers.push_back(receiver_of(b, a_old != nullptr));
      receiver_rank.push_back(p);
    }
    // The count and the write read the top cells' marks and moments (share_top_cells, on
    // `stream`): unordered, a GPU shared by processes gave p99 errors 4-8x (ctest -j6).
    NBODY_CUDA_CHECK(cudaStreamWaitEvent(comm_stream_, timer_.event(DomainTimer::Top), 0));
    timer_.mark(DomainTimer::Gathered, comm_stream_);
    const cuda_tree::WalkParams params{options_.theta, options_.quadrupole, potential};
    std::vector<EssentialCounts> counts;
    if (!receivers.empty()) counts = tree_->count_essential(receivers, params, comm_stream_);
    timer_.mark(DomainTimer::Counted, comm_stream_);
    // This rank's trees are written as soon as counted, before the sizes are exchanged on the
    // host: that exchange waits for the slower rank, and now the write runs meanwhile.
    const std::size_t P = static_cast<std::size_t>(parts);
    std::vector<EssentialCounts> to(P), from(P);
    for (std::size_t k = 0; k < receivers.size(); ++k)
      to[std::size_t(receiver_rank[k])] = counts[k];
    std::vector<const void*> send(P);
    std::vector<void*> recv(P);
    std::vector<std::size_t> send_bytes(P), recv_bytes(P), send_at(P), recv_at(P);
    std::size_t send_total = 0, recv_total = 0;
    for (std::size_t q = 0; q < P; ++q) {
      send_bytes[q] = to[q].cells > 0 ? tree_->essential_bytes(to[q]) : 0;
      send_at[q] = send_total;
      send_total += (send_bytes[q] + 255) / 256 * 256;
    }
    // With room to grow; given back when far larger than needed (the first evaluations send more).
    const auto fit = [](gpu::DeviceBuffer<unsigned char>& b, std::size_t bytes, const char* what) {
      if (b.capacity() > 2 * bytes + (std::size_t(64) << 20)) b.release();
      if (bytes > b.capacity()) b.reserve(bytes + bytes / 8, what);
    };
    fit(send_, send_total, "essential trees sent");
    for (std::size_t k = 0; k < receivers.size(); ++k) {
      const auto q = std::size_t(receiver_rank[k]);
      tree_->write_essential(k, send_.data() + send_at[q], comm_stream_);
      bytes_sent_ += send_bytes[q];
    }
    timer_.mark(DomainTimer::Written, comm_stream_);
    // Sizes to every rank, theirs to this one.
    std::vector<ForceReducer::Bytes> announce(P);
    for (std::size_t q = 0; q < P; ++q) {
      announce[q].resize(sizeof(EssentialCounts));
      std::memcpy(announce[q].data(), &to[q], sizeof(EssentialCounts));
    }
    const auto heard = comm_->exchange(announce);
    timer_.mark(DomainTimer::Announced, comm_stream_);
    for (std::size_t q = 0; q < P; ++q) {
      if (heard[q].size() != sizeof(EssentialCounts))
        throw Error("domain decomposition: a rank sent a malformed essential-tree size");
      std::memcpy(&from[q], heard[q].data(), sizeof(EssentialCounts));
      if (int(q) == me) from[q] = {};
      recv_bytes[q] = from[q].cells > 0 ? tree_->essential_bytes(from[q]) : 0;
      recv_at[q] = recv_total;
      recv_total += (recv_bytes[q] + 255) / 256 * 256;
    }
    fit(recv_, recv_total, "essential trees received");
    for (std::size_t q = 0; q < P; ++q) {
      send[q] = send_.data() + send_at[q];
      recv[q] = recv_.data() + recv_at[q];
    }
    timer_.mark(DomainTimer::ExchangeBegin, comm_stream_);
    comm_->exchange_device(send, send_bytes, recv, recv_bytes, comm_stream_);
    timer_.mark(DomainTimer::ExchangeEnd, comm_stream_);
    NBODY_CUDA_CHECK(cudaEventRecord(received_, comm_stream_));
    if (trace_) {  // the local walk's interactions apart from the received trees'
      NBODY_CUDA_CHECK(cudaStreamSynchronize(stream));
      local_interactions_ = tree_->interactions_per_body();
    }
    NBODY_CUDA_CHECK(cudaStreamWaitEvent(stream, received_, 0));
    timer_.mark(DomainTimer::Received, stream);
    sent_ = received_counts_ = {};
    std::vector<cuda_tree::TreeSources<Real>> received;
    for (int p = 0; p < parts; ++p) {
      const auto q = std::size_t(p);
      sent_.cells += to[q].cells, sent_.bodies += to[q].bodies;
      received_counts_.cells += from[q].cells, received_counts_.bodies += from[q].bodies;
      if (n_ > 0 && from[q].cells > 0)
        received.push_back(tree_->essential_sources(recv[q], from[q]));
    }
    tree_->walk_received(n_, eps, stream, potential, received, merge_);
    timer_.mark(DomainTimer::Done, stream);
  }

  DomainTimer timer_;
  bool trace_ = std::getenv("NBODY_DOMAIN_TRACE") != nullptr;
  bool merge_ = false;  // NBODY_DOMAIN_MERGE: the received trees walked as one
  double local_interactions_ = 0;
  cuda_tree::EssentialCounts sent_, received_counts_;
  cuda_tree::TreeForces<Real>* tree_;
  cuda_direct::DirectForces<Real>* direct_;
  std::shared_ptr<ForceReducer> comm_;
  GravityOptions options_;
  bool sharing_ = false;
  std::size_t pieces_per_rank_;  // NBODY_DOMAIN_PIECES, read at the start
  std::size_t n_ = 0, block_ = 0, reserved_ = 0, walked_ = 0;  // walked_: the last launch's
  std::uint64_t bytes_sent_ = 0;
  cudaStream_t comm_stream_ = nullptr;
  cudaEvent_t received_ = nullptr;
  gpu::DeviceBuffer<gpu::Vec4<Real>> local_;
  gpu::DeviceBuffer<unsigned char> send_, recv_;
  cuda_tree::PieceScratch pieces_;
};

}  // namespace nbody::cuda_resident
