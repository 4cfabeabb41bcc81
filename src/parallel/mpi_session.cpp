// Several processes through MPI (one rank per GPU): the world, sub-groups for scaling
// benchmarks, host sums (MPI_Allreduce) and device sums (NCCL, made on first use: that is
// collective, and every rank reaches it at the same step).
#include <mpi.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "nbody/build_info.hpp"
#include "nbody/distributed.hpp"
#include "nbody/error.hpp"
#include "nbody/input_error.hpp"
#include "parallel/device_sum.hpp"
#include "parallel/single_process.hpp"

namespace nbody {

namespace {

/// NBODY_MPI_ROUND_BYTES: the most bytes of one round of a host exchange, at least 1 and at
/// most 1 GiB (the default); the input error that names the variable otherwise.
long long round_bytes_from(const char* text) {
  constexpr long long kLargest = 1LL << 30;
  if (text == nullptr) return kLargest;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text, &end, 10);
  if (!std::isdigit(static_cast<unsigned char>(text[0])) || *end != '\0' || errno == ERANGE ||
      v < 1 || v > kLargest)
    throw input_error("NBODY_MPI_ROUND_BYTES", "must be a whole number of bytes from 1 to 2^30",
                      std::string(text));
  return v;
}

bool g_started = false;
std::shared_ptr<ForceReducer> g_world;

void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) throw Error(fmt::format("MPI: {} failed (error {})", what, rc));
}

class MpiGroup final : public ForceReducer {
 public:
  explicit MpiGroup(MPI_Comm comm, bool owns) : comm_(comm), owns_(owns) {
    check(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
    check(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
  }
  ~MpiGroup() override {
    device_.reset();  // NCCL before MPI
    if (owns_ && !finalized()) MPI_Comm_free(&comm_);
  }
  [[nodiscard]] int part() const override { return rank_; }
  [[nodiscard]] int parts() const override { return size_; }

  void sum(double* values, std::size_t n) override {
    // MPI counts are int: large arrays go in chunks (the same chunks on every rank).
    constexpr std::size_t kChunk = std::size_t(1) << 30;
    for (std::size_t first = 0; first < n; first += kChunk) {
      const int count = int(std::min(kChunk, n - first));
      check(MPI_Allreduce(MPI_IN_PLACE, values + first, count, MPI_DOUBLE, MPI_SUM, comm_),
            "MPI_Allreduce");
    }
  }

  void sum_device(void* values, std::size_t n, bool is_double, void* stream) override {
    device().sum(values, n, is_double, stream);
  }

  void gather_device(const void* send, void* recv, std::size_t count, bool is_double,
                     void* stream) override {
    device().gather(send, recv, count, is_double, stream);
  }

  void exchange_device(const std::vector<const void*>& send,
                       const std::vector<std::size_t>& send_bytes, const std::vector<void*>& recv,
                       const std::vector<std::size_t>& recv_bytes, void* stream) override {
    if (send.size() != std::size_t(size_) || send_bytes.size() != send.size() ||
        recv.size() != send.size() || recv_bytes.size() != send.size())
      throw Error(fmt::format("exchange_device: buffers for {} processes expected", size_));
    device().exchange(send, send_bytes, recv, recv_bytes, stream);
  }

  [[nodiscard]] int max(int value) override {
    int out = value;
    check(MPI_Allreduce(&value, &out, 1, MPI_INT, MPI_MAX, comm_), "MPI_Allreduce");
    return out;
  }

  [[nodiscard]] std::vector<Bytes> exchange(const std::vector<Bytes>& send) override {
    if (send.size() != std::size_t(size_))
      throw Error(fmt::format("exchange: {} buffers for {} processes", send.size(), size_));
    std::vector<long long> out_bytes(static_cast<std::size_t>(size_)),
        in_bytes(static_cast<std::size_t>(size_));
    for (int p = 0; p < size_; ++p)
      out_bytes[std::size_t(p)] = (long long)send[std::size_t(p)].size();
    check(
        MPI_Alltoall(out_bytes.data(), 1, MPI_LONG_LONG, in_bytes.data(), 1, MPI_LONG_LONG, comm_),
        "MPI_Alltoall");
    std::vector<Bytes> out(static_cast<std::size_t>(size_));
    for (int p = 0; p < size_; ++p)
      out[std::size_t(p)].resize(std::size_t(in_bytes[std::size_t(p)]));
    // In rounds of at most round_bytes_ / P bytes per pair of ranks: MPI's counts and
    // displacements are int (a 2^30-body run's messages pass 2 GiB), and every rank takes
    // part in as many rounds as the largest message needs.
    const long long chunk = std::max<long long>(1, round_bytes_ / size_);
    long long largest = 0;
    for (int p = 0; p < size_; ++p)
      largest = std::max({largest, out_bytes[std::size_t(p)], in_bytes[std::size_t(p)]});
    const int rounds = max(int((largest + chunk - 1) / chunk));
    std::vector<int> out_counts(static_cast<std::size_t>(size_)),
        in_counts(static_cast<std::size_t>(size_));
    Bytes packed, received;
    for (int r = 0; r < rounds; ++r) {
      const long long from = (long long)r * chunk;
      for (int p = 0; p < size_; ++p) {
        const auto q = std::size_t(p);
        out_counts[q] = int(std::clamp(out_bytes[q] - from, 0LL, chunk));
        in_counts[q] = int(std::clamp(in_bytes[q] - from, 0LL, chunk));
      }
      const auto out_at = offsets(out_counts), in_at = offsets(in_counts);
      packed.resize(std::size_t(out_at.back() + out_counts.back()));
      received.resize(std::size_t(in_at.back() + in_counts.back()));
      for (int p = 0; p < size_; ++p) {
        const auto q = std::size_t(p);
        if (out_counts[q] > 0)
          std::copy_n(send[q].begin() + from, out_counts[q], packed.begin() + out_at[q]);
      }
      check(MPI_Alltoallv(packed.data(), out_counts.data(), out_at.data(), MPI_BYTE,
                          received.data(), in_counts.data(), in_at.data(), MPI_BYTE, comm_),
            "MPI_Alltoallv");
      for (int p = 0; p < size_; ++p) {
        const auto q = std::size_t(p);
        if (in_counts[q] > 0)
          std::copy_n(received.begin() + in_at[q], in_counts[q], out[q].begin() + from);
      }
    }
    return out;
  }

  [[nodiscard]] std::vector<Bytes> all_gather(const Bytes& bytes) override {
    long long mine = (long long)bytes.size();
    std::vector<long long> sizes(static_cast<std::size_t>(size_));
    check(MPI_Allgather(&mine, 1, MPI_LONG_LONG, sizes.data(), 1, MPI_LONG_LONG, comm_),
          "MPI_Allgather");
    std::vector<Bytes> out(static_cast<std::size_t>(size_));
    for (int p = 0; p < size_; ++p) out[std::size_t(p)].resize(std::size_t(sizes[std::size_t(p)]));
    // In rounds, as exchange(): every rank knows every size, so every rank counts the same.
    const long long chunk = std::max<long long>(1, round_bytes_ / size_);
    const long long largest = *std::max_element(sizes.begin(), sizes.end());
    const int rounds = int((largest + chunk - 1) / chunk);
    std::vector<int> counts(static_cast<std::size_t>(size_));
    Bytes received;
    for (int r = 0; r < rounds; ++r) {
      const long long from = (long long)r * chunk;
      for (int p = 0; p < size_; ++p)
        counts[std::size_t(p)] = int(std::clamp(sizes[std::size_t(p)] - from, 0LL, chunk));
      const auto at = offsets(counts);
      received.resize(std::size_t(at.back() + counts.back()));
      const int own = counts[std::size_t(rank_)];
      check(MPI_Allgatherv(own > 0 ? bytes.data() + from : bytes.data(), own, MPI_BYTE,
                           received.data(), counts.data(), at.data(), MPI_BYTE, comm_),
            "MPI_Allgatherv");
      for (int p = 0; p < size_; ++p) {
        const auto q = std::size_t(p);
        if (counts[q] > 0) std::copy_n(received.begin() + at[q], counts[q], out[q].begin() + from);
      }
    }
    return out;
  }

 private:
  /// The NCCL group, made on first use (collective: every rank reaches it at one step).
  parallel::DeviceSum& device() {
    if (!device_) {
      // NCCL needs one GPU per rank; two ranks on one GPU make ncclCommInitRank fail on one
      // rank and leave the others waiting. Every rank of a host sees the same counts, so
      // all of them stop here with the same message.
      MPI_Comm host;
      check(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host),
            "MPI_Comm_split_type");
      int on_host = 1;
      MPI_Comm_size(host, &on_host);
      MPI_Comm_free(&host);
      const int gpus = int(gpu_devices().size());
      if (on_host > gpus) {
        throw input_error("--device",
                          fmt::format("{} ranks on this host but {} GPU(s); run one rank per GPU "
                                      "(mpirun -np {})",
                                      on_host, gpus, gpus),
                          "gpu");
      }
      parallel::NcclId id{};
      if (rank_ == 0) id = parallel::make_nccl_id();
      check(MPI_Bcast(id.data(), int(id.size()), MPI_BYTE, 0, comm_), "MPI_Bcast");
      device_ = parallel::make_nccl_sum(rank_, size_, id);
    }
    return *device_;
  }
  static std::vector<int> offsets(const std::vector<int>& counts) {
    std::vector<int> at(counts.size(), 0);
    for (std::size_t p = 1; p < counts.size(); ++p) at[p] = at[p - 1] + counts[p - 1];
    return at;
  }
  static bool finalized() {
    int done = 0;
    MPI_Finalized(&done);
    return done != 0;
  }
  MPI_Comm comm_;
  bool owns_;
  int rank_ = 0, size_ = 1;
  // The most bytes a rank sends (and receives) in one round of exchange() and all_gather():
  // 1 GiB, or NBODY_MPI_ROUND_BYTES (tests make the rounds small).
  long long round_bytes_ = round_bytes_from(std::getenv("NBODY_MPI_ROUND_BYTES"));
  std::unique_ptr<parallel::DeviceSum> device_;
};

/// This rank's index among the ranks of its host.
int local_rank() {
  MPI_Comm local;
  check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local),
        "MPI_Comm_split_type");
  int rank = 0;
  MPI_Comm_rank(local, &rank);
  MPI_Comm_free(&local);
  return rank;
}

}  // namespace

bool have_mpi() {
  return true;
}
bool have_nccl() {
  return parallel::nccl_built_in();
}

std::shared_ptr<ForceReducer> world() {
  return g_world;
}

std::shared_ptr<ForceReducer> first_ranks(int count) {
  if (!g_started) return count == 1 ? std::make_shared<parallel::SingleProcess>() : nullptr;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm sub = MPI_COMM_NULL;
  check(MPI_Comm_split(MPI_COMM_WORLD, rank < count ? 0 : MPI_UNDEFINED, rank, &sub),
        "MPI_Comm_split");
  if (sub == MPI_COMM_NULL) return nullptr;
  return std::make_shared<MpiGroup>(sub, true);
}

std::shared_ptr<ForceReducer> init_distributed(int* argc, char*** argv) {
  if (parallel::launcher_world_size() <= 1) {  // not under mpirun: no MPI start-up cost
    g_world = std::make_shared<parallel::SingleProcess>();
    return g_world;
  }
  int provided = 0;
  check(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  g_started = true;
  g_world = std::make_shared<MpiGroup>(MPI_COMM_WORLD, false);
  // One rank per GPU: the ranks of a host take its GPUs in turn.
  std::string reason;
  const auto gpus = gpu_devices(&reason);
  if (!gpus.empty()) use_gpu(local_rank() % int(gpus.size()));
  return g_world;
}

void finalize_distributed() {
  g_world.reset();
  if (g_started) MPI_Finalize();
  g_started = false;
}

}  // namespace nbody
