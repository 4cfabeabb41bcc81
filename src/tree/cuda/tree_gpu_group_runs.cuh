#pragma once
// The runs of a cell's small children that make its walk groups (the CPU tree's make_groups):
// written once for the groups themselves (cell_groups, tree_gpu_build.cu) and for the pieces
// a rank describes itself by (select_pieces, tree_gpu_receiver.cu), which must hold whole
// groups.
#include <cuda_runtime.h>

#include "tree/cuda/tree_gpu.cuh"

namespace nbody::cuda_tree {

/// For a cell lk of more than kMaxGroup bodies: emit(begin, end) for each run of consecutive
/// children of at most kMaxGroup bodies (contiguous in tree order, together at most
/// kMaxGroup), and larger(index, child) for each larger child, in child order. merge false
/// makes each small child a run of its own.
template <class Emit, class Larger>
__device__ void small_child_runs(const CellLink* __restrict__ link, const CellLink& lk, Emit&& emit,
                                 Larger&& larger, bool merge = true) {
  unsigned run_b = 0, run_e = 0;
  for (int ch = lk.first_child; ch < lk.first_child + lk.child_count; ++ch) {
    const CellLink k = link[ch];
    const unsigned cc = k.end - k.begin;
    if (cc > kMaxGroup) {
      larger(ch, k);
      continue;
    }
    if (merge && run_e > run_b && run_e == k.begin && run_e - run_b + cc <= kMaxGroup) {
      run_e = k.end;
      continue;
    }
    if (run_e > run_b) emit(run_b, run_e);
    run_b = k.begin;
    run_e = k.end;
  }
  if (run_e > run_b) emit(run_b, run_e);
}

}  // namespace nbody::cuda_tree
