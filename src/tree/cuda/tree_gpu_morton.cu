// TreeForces::build_morton: the Morton build's keys, their radix sort and the bodies
// gathered into tree order, then the cells (redone while they overflow their arrays).
#include <cuda_runtime.h>

#include <cub/device/device_radix_sort.cuh>

#include "core/cuda/cuda_check.cuh"
#include "tree/cuda/tree_gpu.cuh"

namespace nbody::cuda_tree {

template <class Real>
unsigned TreeForces<Real>::build_morton(std::size_t n, cudaStream_t stream) {
  const auto items = static_cast<long long>(n);
  std::size_t bytes = 0;
  // sort: keys into the sort's input arrays, radix sort, bodies gathered into tree order
  // A double-buffered sort: cub's scratch is then a few histograms, not a copy of the keys
  // and the order. The second buffers (12 bytes a body) are the tree-ordered bodies' array,
  // dead from the last walk to the gather below. The sort must end in keys_ and order_: it
  // starts from whichever buffers make its number of passes end there (learnt from the last
  // sort; where it ends in the other, the result is copied over and the next one starts there).
  static_assert(sizeof(Vec4<Real>) >= sizeof(unsigned long long) + sizeof(unsigned));
  unsigned long long* const room = spare_keys();
  unsigned* const room_order = reinterpret_cast<unsigned*>(room + n);
  TreeView<Real> unsorted = view(n);
  if (sort_from_room_) unsorted.keys = room, unsorted.order = room_order;
  launch_keys(unsorted, stream);
  const int key_bits_used = dim_ * key_bits(dim_);
  cub::DoubleBuffer<unsigned long long> keys(unsorted.keys, sort_from_room_ ? keys_.data() : room);
  cub::DoubleBuffer<unsigned> order(unsorted.order, sort_from_room_ ? order_.data() : room_order);
  bytes = 0;
  NBODY_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys, order, items, 0,
                                                   key_bits_used, stream));
  scratch(bytes);
  NBODY_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp_.data(), bytes, keys, order, items, 0,
                                                   key_bits_used, stream));
  if (keys.Current() != keys_.data()) {
    NBODY_CUDA_CHECK(cudaMemcpyAsync(keys_.data(), keys.Current(), n * sizeof(unsigned long long),
                                     cudaMemcpyDeviceToDevice, stream));
    NBODY_CUDA_CHECK(cudaMemcpyAsync(order_.data(), order.Current(), n * sizeof(unsigned),
                                     cudaMemcpyDeviceToDevice, stream));
    sort_from_room_ = !sort_from_room_;
  }
  launch_gather(view(n), stream);
  NBODY_CUDA_CHECK(cudaEventRecord(events_[2], stream));

  // build, grown and redone while the cells overflow
  return until_cells_fit([&] { launch_build(view(n), stream); }, stream);
}

template unsigned TreeForces<float>::build_morton(std::size_t, cudaStream_t);
template unsigned TreeForces<double>::build_morton(std::size_t, cudaStream_t);

}  // namespace nbody::cuda_tree
