#pragma once
// Several processes (MPI ranks, one per GPU) sharing one simulation (docs/distributed.md).
// Where the domain decomposition runs, every rank owns its bodies and the ranks exchange
// bodies, essential trees and force blocks (exchange, exchange_device); elsewhere the state
// is replicated: every rank holds all bodies, computes the forces of its share of the work
// with exact zeros elsewhere, and a ForceReducer sums the shares. One process (or a build
// without MPI) is the case parts() == 1, with nothing to sum.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace nbody {

/// A decomposed run's ownership on CPU ranks (docs/distributed.md, part 2), kept in its
/// checkpoints so that a restart on the same number of ranks continues byte for byte: the
/// cuts of the key line (rank r owns [cuts[r], cuts[r + 1])) and their level, and every body
/// this rank holds its cost (interactions of the last evaluation, in its order), which the
/// next cut balances. Empty cuts: none (one process, or GPU ranks, whose cuts follow
/// measured times and so never repeat bit for bit).
struct DecompositionState {
  std::vector<std::uint64_t> cuts;
  int cut_level = 0;
  std::vector<double> cost;
};

class ForceReducer {
 public:
  virtual ~ForceReducer() = default;
  /// This process's share (0-based) and the number of shares.
  [[nodiscard]] virtual int part() const = 0;
  [[nodiscard]] virtual int parts() const = 0;
  /// Sums n doubles of host memory over all processes, in place (MPI_Allreduce); every
  /// process gets the same bits.
  virtual void sum(double* values, std::size_t n) = 0;
  /// Sums n floats (or doubles) of device memory over all processes, in place, ordered on
  /// the CUDA stream `stream` (NCCL; without NCCL through the host and MPI).
  virtual void sum_device(void* values, std::size_t n, bool is_double, void* stream) = 0;
  /// Gathers `count` floats (or doubles) of device memory from every process: recv holds
  /// process 0's send, then process 1's, ... (count x parts() entries), ordered on `stream`.
  virtual void gather_device(const void* send, void* recv, std::size_t count, bool is_double,
                             void* stream) = 0;
  /// The largest of each process's value (e.g. "a signal arrived here"), so that every
  /// process takes the same decision at the same step.
  [[nodiscard]] virtual int max(int value) = 0;

  // Point-to-point traffic of the domain decomposition (docs/distributed.md part 2): every
  // rank owns its bodies, and what moves between ranks is bytes (bodies that migrate, the
  // locally essential trees, the direct sum's travelling blocks). Collective: every process
  // calls them, in the same order.
  using Bytes = std::vector<char>;
  /// send[p] (parts() entries) goes to process p; returns what every process sent to this
  /// one, in process order (MPI_Alltoallv). Empty buffers cost no traffic.
  [[nodiscard]] virtual std::vector<Bytes> exchange(const std::vector<Bytes>& send) = 0;
  /// Every process's bytes, in process order (MPI_Allgatherv).
  [[nodiscard]] virtual std::vector<Bytes> all_gather(const Bytes& bytes) = 0;
  /// Device memory point to point: send[p] (send_bytes[p] bytes) goes to process p and
  /// recv[p] (recv_bytes[p] bytes, which the caller learned from exchange() or all_gather())
  /// comes from p, ordered on the CUDA stream `stream` (NCCL send/recv in one group; through
  /// the host where a test has no NCCL). This process's own entry and empty ones move
  /// nothing. Collective.
  virtual void exchange_device(const std::vector<const void*>& send,
                               const std::vector<std::size_t>& send_bytes,
                               const std::vector<void*>& recv,
                               const std::vector<std::size_t>& recv_bytes, void* stream) = 0;
};

/// The processes of this run: MPI_COMM_WORLD when nbody was started by mpirun (and built
/// with MPI), else one process. Created by init_distributed(); nullptr before.
[[nodiscard]] std::shared_ptr<ForceReducer> world();

/// The first `count` ranks of the world as their own group (for scaling benchmarks);
/// ranks >= count get nullptr. Collective: every rank must call it.
[[nodiscard]] std::shared_ptr<ForceReducer> first_ranks(int count);

/// Starts MPI when the process was launched by mpirun (OMPI_COMM_WORLD_SIZE, PMI_SIZE or
/// PMIX_RANK in the environment) and the build has MPI; picks this rank's GPU (local rank
/// modulo the GPUs); returns world(). Safe to call once, before anything else.
std::shared_ptr<ForceReducer> init_distributed(int* argc, char*** argv);
/// Ends MPI (when it was started).
void finalize_distributed();
/// True when built with MPI / NCCL.
[[nodiscard]] bool have_mpi();
[[nodiscard]] bool have_nccl();

}  // namespace nbody
