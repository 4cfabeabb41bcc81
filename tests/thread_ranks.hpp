#pragma once
// P "ranks" of a distributed run as P threads of one test process (docs/distributed.md):
// each thread steps its own Simulation with a ForceReducer of P parts, and the reducers
// meet at a barrier to sum or gather, as MPI and NCCL would. This checks the sharing of
// the force work (GravitySolver::set_share, DeviceForces::set_share, the exchanges) in
// the unit and GPU test suites, with no mpirun; tests/cli/test_mpi_cli.py and
// scripts/device_mpi_check.sh run the real thing.
//
// Sums add the parts in part order, so every thread gets the same bits. A device buffer
// goes through the host: the GPU tests pass the copy functions (cudaMemcpy), the CPU tests
// none (a device sum then fails the test).
#include <algorithm>
#include <barrier>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "nbody/distributed.hpp"
#include "nbody/error.hpp"

namespace nbody::testing {

/// Device <-> host copies for the device collectives: (destination, source, bytes,
/// stream). The copy from the device must wait for the stream's earlier work, and the copy to
/// the device must be done before the stream's later work reads it (tests/gpu/cuda_copies.hpp).
struct DeviceCopies {
  std::function<void(void*, const void*, std::size_t, void*)> to_host;
  std::function<void(void*, const void*, std::size_t, void*)> to_device;
};

class ThreadGroup {
 public:
  ThreadGroup(int parts, DeviceCopies copies)
      : parts_(parts), copies_(std::move(copies)), meet_(parts), staged_(std::size_t(parts)) {}

  [[nodiscard]] int parts() const { return parts_; }

  /// Every part's bytes (in part order) once all parts have handed theirs in.
  template <class Combine>
  void exchange(int part, const void* bytes, std::size_t size, Combine&& combine) {
    staged_[std::size_t(part)].assign(static_cast<const char*>(bytes),
                                      static_cast<const char*>(bytes) + size);
    meet_.arrive_and_wait();
    combine(staged_);
    meet_.arrive_and_wait();  // nobody restages before everyone has read
  }

  const DeviceCopies& copies() const { return copies_; }

 private:
  int parts_;
  DeviceCopies copies_;
  std::barrier<> meet_;
  std::vector<std::vector<char>> staged_;
};

class ThreadReducer final : public ForceReducer {
 public:
  ThreadReducer(std::shared_ptr<ThreadGroup> group, int part)
      : group_(std::move(group)), part_(part) {}
  [[nodiscard]] int part() const override { return part_; }
  [[nodiscard]] int parts() const override { return group_->parts(); }

  void sum(double* values, std::size_t n) override { sum_host(values, n); }

  void sum_device(void* values, std::size_t n, bool is_double, void* stream) override {
    const std::size_t bytes = n * (is_double ? sizeof(double) : sizeof(float));
    std::vector<char> host(bytes);
    copies().to_host(host.data(), values, bytes, stream);
    if (is_double) {
      sum_host(reinterpret_cast<double*>(host.data()), n);
    } else {
      sum_host(reinterpret_cast<float*>(host.data()), n);
    }
    copies().to_device(values, host.data(), bytes, stream);
  }

  void gather_device(const void* send, void* recv, std::size_t count, bool is_double,
                     void* stream) override {
    const std::size_t bytes = count * (is_double ? sizeof(double) : sizeof(float));
    std::vector<char> host(bytes), all;
    copies().to_host(host.data(), send, bytes, stream);
    group_->exchange(part_, host.data(), bytes, [&](const std::vector<std::vector<char>>& parts) {
      for (const auto& p : parts) all.insert(all.end(), p.begin(), p.end());
    });
    copies().to_device(recv, all.data(), all.size(), stream);
  }

  [[nodiscard]] std::vector<Bytes> exchange(const std::vector<Bytes>& send) override {
    if (send.size() != std::size_t(parts()))
      throw Error("ThreadReducer::exchange: one buffer per part expected");
    // Staged as [size of buffer 0 .. P-1][buffer 0][buffer 1]...; each part takes its own.
    Bytes staged(send.size() * sizeof(std::size_t));
    for (std::size_t p = 0; p < send.size(); ++p) {
      const std::size_t n = send[p].size();
      std::memcpy(staged.data() + p * sizeof n, &n, sizeof n);
      staged.insert(staged.end(), send[p].begin(), send[p].end());
    }
    std::vector<Bytes> received(send.size());
    group_->exchange(part_, staged.data(), staged.size(),
                     [&](const std::vector<std::vector<char>>& parts) {
                       for (std::size_t from = 0; from < parts.size(); ++from) {
                         std::size_t at = parts.size() * sizeof(std::size_t), n = 0;
                         for (std::size_t p = 0; p <= std::size_t(part_); ++p) {
                           std::memcpy(&n, parts[from].data() + p * sizeof n, sizeof n);
                           if (p < std::size_t(part_)) at += n;
                         }
                         received[from].assign(parts[from].begin() + std::ptrdiff_t(at),
                                               parts[from].begin() + std::ptrdiff_t(at + n));
                       }
                     });
    return received;
  }

  [[nodiscard]] std::vector<Bytes> all_gather(const Bytes& bytes) override {
    std::vector<Bytes> all;
    group_->exchange(part_, bytes.data(), bytes.size(),
                     [&](const std::vector<std::vector<char>>& parts) { all = parts; });
    return all;
  }

  void exchange_device(const std::vector<const void*>& send,
                       const std::vector<std::size_t>& send_bytes, const std::vector<void*>& recv,
                       const std::vector<std::size_t>& recv_bytes, void* stream) override {
    std::vector<Bytes> staged(send.size());
    for (std::size_t p = 0; p < send.size(); ++p) {
      if (int(p) == part_ || send_bytes[p] == 0) continue;
      staged[p].resize(send_bytes[p]);
      copies().to_host(staged[p].data(), send[p], send_bytes[p], stream);
    }
    const std::vector<Bytes> got = exchange(staged);
    for (std::size_t p = 0; p < recv.size(); ++p) {
      if (int(p) == part_ || recv_bytes[p] == 0) continue;
      if (got[p].size() != recv_bytes[p])
        throw Error("ThreadReducer::exchange_device: a message of another size than announced");
      copies().to_device(recv[p], got[p].data(), recv_bytes[p], stream);
    }
  }

  [[nodiscard]] int max(int value) override {
    int out = value;
    group_->exchange(part_, &value, sizeof value, [&](const std::vector<std::vector<char>>& parts) {
      for (const auto& p : parts) {
        int v = 0;
        std::memcpy(&v, p.data(), sizeof v);
        out = std::max(out, v);
      }
    });
    return out;
  }

 private:
  const DeviceCopies& copies() const {
    if (!group_->copies().to_host)
      throw Error("ThreadReducer: no device copies given (a CPU test summed device memory)");
    return group_->copies();
  }

  template <class T>
  void sum_host(T* values, std::size_t n) {
    std::vector<T> total(n, T(0));
    group_->exchange(part_, values, n * sizeof(T),
                     [&](const std::vector<std::vector<char>>& parts) {
                       for (const auto& p : parts) {
                         const T* v = reinterpret_cast<const T*>(p.data());
                         for (std::size_t i = 0; i < n; ++i) total[i] += v[i];
                       }
                     });
    std::memcpy(values, total.data(), n * sizeof(T));
  }

  std::shared_ptr<ThreadGroup> group_;
  int part_;
};

/// Runs body(reducer) on `parts` threads, each with its part's reducer; returns what each
/// returned, in part order. The first exception (e.g. a failed ASSERT's throw) is rethrown.
template <class Result>
std::vector<Result> run_parts(int parts,
                              const std::function<Result(std::shared_ptr<ForceReducer>)>& body,
                              DeviceCopies copies = {}) {
  auto group = std::make_shared<ThreadGroup>(parts, std::move(copies));
  std::vector<Result> results(static_cast<std::size_t>(parts));
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(parts));
  std::vector<std::thread> threads;
  for (int p = 0; p < parts; ++p) {
    threads.emplace_back([&, p] {
      try {
        results[std::size_t(p)] = body(std::make_shared<ThreadReducer>(group, p));
      } catch (...) {
        errors[std::size_t(p)] = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
  return results;
}

}  // namespace nbody::testing
