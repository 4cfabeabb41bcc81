// NCCL bandwidth between the GPUs of one host, for the exchanges nbody makes each step
// (docs/distributed.md): ncclAllGather and ncclAllReduce of float buffers, timed with CUDA
// events, reported as the bus bandwidth nccl-tests would print (all-gather (P-1)/P x bytes,
// all-reduce 2(P-1)/P x bytes, per second). One rank per GPU:
//   cmake --build build/cuda --target nccl_bandwidth   (built with CUDA, MPI and NCCL)
//   mpirun -np 4 -x NCCL_NVLS_ENABLE=0 build/cuda/bench/nccl_bandwidth
#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <cstdio>
#include <cstdlib>

#define CHECK_CUDA(x)                                                                         \
  do {                                                                                        \
    cudaError_t e_ = (x);                                                                     \
    if (e_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                           \
    }                                                                                         \
  } while (0)
#define CHECK_NCCL(x)                                                                         \
  do {                                                                                        \
    ncclResult_t r_ = (x);                                                                    \
    if (r_ != ncclSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, ncclGetErrorString(r_)); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                           \
    }                                                                                         \
  } while (0)

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1, gpus = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  CHECK_CUDA(cudaGetDeviceCount(&gpus));
  CHECK_CUDA(cudaSetDevice(rank % gpus));
  ncclUniqueId id;
  if (rank == 0) CHECK_NCCL(ncclGetUniqueId(&id));
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  ncclComm_t comm;
  CHECK_NCCL(ncclCommInitRank(&comm, ranks, id, rank));
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const size_t max_bytes = size_t(1) << 30;  // receive buffer: 1 GiB
  float *send = nullptr, *recv = nullptr;
  CHECK_CUDA(cudaMalloc(&send, max_bytes));
  CHECK_CUDA(cudaMalloc(&recv, max_bytes));
  CHECK_CUDA(cudaMemset(send, 0, max_bytes));
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  if (rank == 0) std::printf("%-10s %12s %10s %12s\n", "operation", "bytes", "ms", "busbw GB/s");
  for (int op = 0; op < 2; ++op) {
    for (size_t bytes = size_t(1) << 24; bytes <= max_bytes; bytes *= 4) {
      const size_t count = bytes / sizeof(float);  // all-gather: the output's count
      const int reps = 5;
      for (int r = -1; r < reps; ++r) {  // r = -1: warm-up
        if (r == 0) CHECK_CUDA(cudaEventRecord(start, stream));
        if (op == 0) {
          CHECK_NCCL(ncclAllGather(send, recv, count / ranks, ncclFloat, comm, stream));
        } else {
          CHECK_NCCL(ncclAllReduce(recv, recv, count, ncclFloat, ncclSum, comm, stream));
        }
      }
      CHECK_CUDA(cudaEventRecord(stop, stream));
      CHECK_CUDA(cudaEventSynchronize(stop));
      float ms = 0;
      CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
      ms /= reps;
      const double factor = op == 0 ? double(ranks - 1) / ranks : 2.0 * (ranks - 1) / ranks;
      if (rank == 0) {
        std::printf("%-10s %12zu %10.3f %12.1f\n", op == 0 ? "allgather" : "allreduce", bytes, ms,
                    factor * double(bytes) / (ms * 1e-3) / 1e9);
      }
    }
  }
  ncclCommDestroy(comm);
  MPI_Finalize();
  return 0;
}
