// The fast CPU direct sum: packs the bodies into padded, aligned SoA scratch arrays of
// float or double, runs the SIMD kernel (AVX2+FMA when the CPU has it, else the
// baseline) over blocks of i-bodies with OpenMP, and scales the result back.
//
// Hierarchical time steps (compute_forces_active): the sources are packed in a permuted
// order, the active bodies first (in the order given), then all the others, so that
// target k is source k; the kernel runs over the i-blocks that cover the active bodies
// alone (cost: active x N), and their results go back to the active entries only.
#include "gravity/direct_simd.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <new>
#include <type_traits>
#include <vector>

#include "core/aligned_vector.hpp"
#include "gravity/direct_simd_kernels.hpp"
#include "gravity/unit_scaling.hpp"
#include "nbody/error.hpp"

namespace nbody {
namespace simd {

std::string_view to_string(Isa isa) {
  return isa == Isa::Avx2 ? "avx2" : "baseline";
}

bool isa_supported(Isa isa) {
  if (isa == Isa::Baseline) return true;
#if defined(NBODY_HAVE_AVX2_KERNEL)
  // libgcc's check includes the OS saving the AVX registers (XCR0).
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

Isa best_isa() {
  return isa_supported(Isa::Avx2) ? Isa::Avx2 : Isa::Baseline;
}

namespace {

static_assert(kAlignment <= kCacheLineAlignment, "packed arrays must be kAlignment-aligned");

template <class Real>
class DirectSumSimd final : public GravitySolver {
 public:
  DirectSumSimd(double G, double softening, int threads, Isa isa)
      : G_(G),
        softening_(softening),
        threads_(threads),
        isa_(isa),
        kernel_(body_kernel<Real>(isa)) {}

  bool set_share(int part, int parts) override {
    part_ = part;
    parts_ = parts;
    return true;
  }

  [[nodiscard]] std::string name() const override {
    return fmt::format("direct-simd-{}-{}", to_string(isa_),
                       std::is_same_v<Real, float> ? "float" : "double");
  }

  void compute_forces(ParticleSystem& ps, bool potential) override {
    const std::size_t n = ps.size();
    for (auto* a : {&ps.ax, &ps.ay, &ps.az}) a->resize(n);
    if (potential) ps.potential.resize(n);
    pairs_ = 0;
    targets_ = n;
    if (n > 0) {
      const Scaling scale = bodies_scaling(ps, softening_);
      run_kernel(pack(ps, scale, potential), n);
      unpack(ps, scale, potential);
    }
    ps.set_force_flags(true, potential);
  }

  void compute_forces_active(ParticleSystem& ps, bool potential,
                             const std::vector<std::uint32_t>& active) override {
    const std::size_t n = ps.size();
    for (auto* a : {&ps.ax, &ps.ay, &ps.az}) a->resize(n);
    if (potential) ps.potential.resize(n);
    pairs_ = 0;
    targets_ = active.size();
    if (active.empty()) return;
    // The packing order: the active bodies, then the others in ascending order.
    is_active_.assign(n, 0);
    order_.assign(active.begin(), active.end());
    for (const std::uint32_t i : active) {
      if (i >= n || is_active_[i] != 0) {
        throw Error(
            fmt::format("compute_forces_active: body {} is out of range (N = {}) or "
                        "listed twice",
                        i, n));
      }
      is_active_[i] = 1;
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (is_active_[i] == 0) order_.push_back(static_cast<std::uint32_t>(i));
    }
    const Scaling scale = bodies_scaling(ps, softening_);
    run_kernel(pack(ps, scale, potential, order_.data()), active.size());
    unpack_active(ps, scale, potential, active);
  }

  /// interactions_per_body: the kernel's pair evaluations (padding targets included, this
  /// process's share only) per body asked for (all N, or the active ones).
  [[nodiscard]] SolverStats stats() const override {
    SolverStats s;
    s.interactions_per_body = targets_ > 0 ? double(pairs_) / double(targets_) : 0.0;
    return s;
  }

 private:
  /// Copies the bodies into the scratch arrays, scaled: source i is body i, or body
  /// order[i] when an order (a permutation of 0..n-1) is given. Padding i-bodies sit on the
  /// last source with mass 0 (the kernels only read j < n, so padding never acts on a real
  /// body; its own results are dropped).
  KernelArgs<Real> pack(const ParticleSystem& ps, const Scaling& scale, bool potential,
                        const std::uint32_t* order = nullptr) {
    const std::size_t n = ps.size();
    const std::size_t padded = (n + kBlock - 1) / kBlock * kBlock;
    for (auto* v : {&x_, &y_, &z_, &m_, &ax_, &ay_, &az_}) v->resize(padded);
    if (potential) phi_.resize(padded);
    if (order != nullptr) {
      pack_sources<true>(ps, scale, order);
    } else {
      pack_sources<false>(ps, scale, nullptr);
    }
    const Real eps = Real(softening_ * scale.position);
    // Targets = sources: target i is source i.
    return {.x = x_.data(),
            .y = y_.data(),
            .z = z_.data(),
            .m = m_.data(),
            .n = n,
            .eps2 = eps * eps,
            .ax = ax_.data(),
            .ay = ay_.data(),
            .az = az_.data(),
            .tx = x_.data(),
            .ty = y_.data(),
            .tz = z_.data(),
            .phi = potential ? phi_.data() : nullptr,
            .self_first = 0};
  }

  template <bool Permuted>
  void pack_sources(const ParticleSystem& ps, const Scaling& scale, const std::uint32_t* order) {
    const std::size_t n = ps.size();
    const double sp = scale.position, sm = scale.mass;
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t s = Permuted ? order[i] : i;
      x_[i] = Real(ps.x[s] * sp);
      y_[i] = Real(ps.y[s] * sp);
      z_[i] = Real(ps.z[s] * sp);
      m_[i] = Real(ps.mass[s] * sm);
    }
    const std::size_t last = Permuted ? order[n - 1] : n - 1;
    for (std::size_t i = n; i < x_.size(); ++i) {
      x_[i] = Real(ps.x[last] * sp);
      y_[i] = Real(ps.y[last] * sp);
      z_[i] = Real(ps.z[last] * sp);
      m_[i] = Real(0);
    }
  }

  /// This process's share of the i-blocks that cover targets 0 .. targets-1 (all of them
  /// in one process), with OpenMP; the other blocks' results are set to 0.
  void run_kernel(const KernelArgs<Real>& args, std::size_t targets) {
    const ShareRange share = share_range((targets + kBlock - 1) / kBlock, part_, parts_);
    if (parts_ > 1) {
      for (auto* v : {&ax_, &ay_, &az_}) std::fill(v->begin(), v->end(), Real(0));
      if (args.phi != nullptr) std::fill(phi_.begin(), phi_.end(), Real(0));
    }
    const auto first_block = static_cast<std::ptrdiff_t>(share.first);
    const auto blocks = static_cast<std::ptrdiff_t>(share.last);
    run_blocks(kernel_, args, first_block, blocks, threads_);
    pairs_ = std::uint64_t(share.last - share.first) * kBlock * args.n;
  }

  /// (G a) 2^(q-2p) and (G phi) 2^(q-p): the first product rounds as the scalar
  /// reference's G * a does, the second is exact.
  void unpack(ParticleSystem& ps, const Scaling& scale, bool potential) const {
    const std::size_t n = ps.size();
    for (std::size_t i = 0; i < n; ++i) {
      ps.ax[i] = G_ * double(ax_[i]) * scale.acceleration;
      ps.ay[i] = G_ * double(ay_[i]) * scale.acceleration;
      ps.az[i] = G_ * double(az_[i]) * scale.acceleration;
    }
    if (!potential) return;
    for (std::size_t i = 0; i < n; ++i) ps.potential[i] = G_ * double(phi_[i]) * scale.potential;
  }

  /// unpack() of a permuted evaluation: target k is body active[k].
  void unpack_active(ParticleSystem& ps, const Scaling& scale, bool potential,
                     const std::vector<std::uint32_t>& active) const {
    for (std::size_t k = 0; k < active.size(); ++k) {
      const std::size_t i = active[k];
      ps.ax[i] = G_ * double(ax_[k]) * scale.acceleration;
      ps.ay[i] = G_ * double(ay_[k]) * scale.acceleration;
      ps.az[i] = G_ * double(az_[k]) * scale.acceleration;
    }
    if (!potential) return;
    for (std::size_t k = 0; k < active.size(); ++k) {
      ps.potential[active[k]] = G_ * double(phi_[k]) * scale.potential;
    }
  }

  double G_;
  double softening_;
  int threads_;
  Isa isa_;
  BodyKernel<Real> kernel_;
  int part_ = 0, parts_ = 1;
  AlignedVector<Real> x_, y_, z_, m_, ax_, ay_, az_, phi_;  // scratch, reused between calls
  std::vector<std::uint32_t> order_;     // compute_forces_active: source k -> body
  std::vector<std::uint8_t> is_active_;  // compute_forces_active: body -> listed
  std::uint64_t pairs_ = 0;              // the last evaluation's kernel pair evaluations
  std::size_t targets_ = 0;              // and the bodies it was asked for
};

}  // namespace

std::unique_ptr<GravitySolver> make_direct_simd(Precision precision, double G, double softening,
                                                int threads, Isa isa) {
  if (!isa_supported(isa)) {
    throw Error(
        fmt::format("direct-sum kernel {}: not supported by this CPU or build", to_string(isa)));
  }
  if (precision == Precision::Float) {
    return std::make_unique<DirectSumSimd<float>>(G, softening, threads, isa);
  }
  return std::make_unique<DirectSumSimd<double>>(G, softening, threads, isa);
}

}  // namespace simd

std::unique_ptr<GravitySolver> make_direct_simd(Precision precision, double G, double softening,
                                                int threads) {
  return simd::make_direct_simd(precision, G, softening, threads, simd::best_isa());
}

}  // namespace nbody
