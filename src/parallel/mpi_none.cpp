// Builds without MPI: one process. Started by mpirun anyway, every rank would run the
// whole simulation and write the same files: refused with the reason.
#include <fmt/format.h>

#include "nbody/error.hpp"
#include "parallel/device_sum.hpp"
#include "parallel/single_process.hpp"

namespace nbody {

namespace {
std::shared_ptr<ForceReducer> g_world;
}

bool have_mpi() {
  return false;
}
bool have_nccl() {
  return parallel::nccl_built_in();
}

std::shared_ptr<ForceReducer> world() {
  return g_world;
}

std::shared_ptr<ForceReducer> first_ranks(int count) {
  return count == 1 ? std::make_shared<parallel::SingleProcess>() : nullptr;
}

std::shared_ptr<ForceReducer> init_distributed(int*, char***) {
  if (const int size = parallel::launcher_world_size(); size > 1) {
    throw Error(
        fmt::format("started as {} MPI ranks, but this nbody was built without MPI (install "
                    "libopenmpi-dev and rebuild); every rank would run the whole simulation",
                    size));
  }
  g_world = std::make_shared<parallel::SingleProcess>();
  return g_world;
}

void finalize_distributed() {}

}  // namespace nbody
