// What the MPI launcher tells a process through its environment (Open MPI, MPICH/PMI, PMIx).
#include <cstdlib>

#include "parallel/single_process.hpp"

namespace nbody::parallel {

int launcher_world_size() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS"}) {
    if (const char* v = std::getenv(name)) return std::atoi(v);
  }
  return std::getenv("PMIX_RANK") != nullptr ? 2 : 1;  // PMIx without a size: assume several
}

}  // namespace nbody::parallel
