#pragma once
// memcpy on several threads, for large host copies (a GPU rank's state out of its pinned
// staging buffers, core/cuda/host_download.cuh): one thread copies 5-10 GB/s, a PCIe 5 link
// carries ~50.
#include <cstddef>

namespace nbody {

/// Copies `bytes` from src to dst (not overlapping) on up to `threads` OpenMP threads (0: up to
/// 8 of the team's), in pieces of 1 MiB; small copies on the calling thread.
void parallel_copy(void* dst, const void* src, std::size_t bytes, int threads = 0);

}  // namespace nbody
