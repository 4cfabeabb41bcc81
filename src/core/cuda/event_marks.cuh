#pragma once
// A fixed set of CUDA events that time the parts of some work: mark k recorded on a stream,
// milliseconds between two marks once the streams are synchronised. DomainTimer (the force
// stage of a decomposed GPU tree) and DeviceDomain (its update before the forces) share it.
#include <cuda_runtime.h>

#include <cstddef>

#include "core/cuda/cuda_check.cuh"

namespace nbody::gpu {

template <std::size_t N>
class EventMarks {
 public:
  EventMarks() {
    for (cudaEvent_t& e : events_) NBODY_CUDA_CHECK(cudaEventCreate(&e));
  }
  ~EventMarks() {
    for (cudaEvent_t e : events_)
      if (e) cudaEventDestroy(e);
  }
  EventMarks(const EventMarks&) = delete;
  EventMarks& operator=(const EventMarks&) = delete;

  void mark(std::size_t k, cudaStream_t stream) {
    NBODY_CUDA_CHECK(cudaEventRecord(events_[k], stream));
  }
  /// The event of mark k, for the host or another stream to wait on.
  [[nodiscard]] cudaEvent_t event(std::size_t k) const { return events_[k]; }
  /// After the streams' synchronisation: milliseconds from one mark to another.
  [[nodiscard]] double ms(std::size_t from, std::size_t to) const {
    float v = 0;
    NBODY_CUDA_CHECK(cudaEventElapsedTime(&v, events_[from], events_[to]));
    return double(v);
  }

 private:
  cudaEvent_t events_[N] = {};
};

}  // namespace nbody::gpu
