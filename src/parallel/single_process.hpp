#pragma once
// The ForceReducer of one process: nothing to sum.
#include "nbody/distributed.hpp"

namespace nbody::parallel {

class SingleProcess final : public ForceReducer {
 public:
  [[nodiscard]] int part() const override { return 0; }
  [[nodiscard]] int parts() const override { return 1; }
  void sum(double*, std::size_t) override {}
  void sum_device(void*, std::size_t, bool, void*) override {}
  void gather_device(const void*, void*, std::size_t, bool, void*) override {}
  [[nodiscard]] int max(int value) override { return value; }
  [[nodiscard]] std::vector<Bytes> exchange(const std::vector<Bytes>& send) override {
    return send;
  }
  [[nodiscard]] std::vector<Bytes> all_gather(const Bytes& bytes) override { return {bytes}; }
  void exchange_device(const std::vector<const void*>&, const std::vector<std::size_t>&,
                       const std::vector<void*>&, const std::vector<std::size_t>&, void*) override {
  }
};

/// Whether the environment says an MPI launcher started this process, and with how many.
[[nodiscard]] int launcher_world_size();

}  // namespace nbody::parallel
