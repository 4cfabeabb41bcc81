#pragma once
// The OpenMP team size a `threads` option asks for, and how an exception leaves a team.
#include <atomic>
#include <exception>

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace nbody {

/// `threads` when > 0, else OpenMP's default (1 without OpenMP).
inline int team_size(int threads) {
#if defined(_OPENMP)
  return threads > 0 ? threads : omp_get_max_threads();
#else
  (void)threads;
  return 1;
#endif
}

/// Carries an exception out of an OpenMP parallel region. One that leaves a region (or a
/// loop iteration of `omp for`) calls std::terminate: the process aborts (SIGABRT, and
/// Python's interpreter dies with it). So the work of a region that can throw (it
/// allocates, or calls code that may throw nbody::Error) runs through run(), which keeps the
/// first exception; after the region, rethrow() throws it on the calling thread. A try block
/// costs nothing until something is thrown, so the happy path is as fast as before.
///
///   RegionErrors errors;
///   #pragma omp parallel for
///   for (...) errors.run([&] { work(i); });
///   errors.rethrow();
class RegionErrors {
 public:
  /// f(), with whatever it throws kept (the first of all threads) instead of propagated.
  template <class F>
  void run(F&& f) noexcept {
    try {
      f();
    } catch (...) {
      capture();
    }
  }
  /// Keeps the exception being handled (call it in a catch block) if none is kept yet.
  void capture() noexcept {
#pragma omp critical(nbody_region_errors)
    {
      if (!first_) first_ = std::current_exception();
    }
    failed_.store(true, std::memory_order_relaxed);
  }
  /// Whether some thread failed: long loops may skip their remaining work.
  [[nodiscard]] bool failed() const noexcept {
    return failed_.load(std::memory_order_relaxed);
  }
  /// After the region: throws the exception kept, if any.
  void rethrow() const {
    if (first_) std::rethrow_exception(first_);
  }

 private:
  std::exception_ptr first_;
  std::atomic<bool> failed_{false};
};

}  // namespace nbody
