#pragma once
// The machine's physical memory, for refusing a request that can never fit before anything
// is allocated (`-n`, a body count read from a file). One place, so the generators and the
// HDF5 readers agree on what "more than this machine has" means.
#include <unistd.h>

namespace nbody {

/// Bytes of physical memory, or 0 when the system does not say (then nothing is refused).
inline double machine_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? double(pages) * double(page) : 0;
}

}  // namespace nbody
