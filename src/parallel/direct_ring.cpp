// The ring of travelling source blocks (direct_ring.hpp). The blocks travel packed as the
// kernel reads them (x, y, z, m in the kernel's arithmetic, scaled by powers of two that
// every rank agrees on), so a rank passes on exactly what it computed with: 16 bytes a body
// in float, 32 in double.
//
// The overlap of the exchange with the kernel is left out on the CPU: MPI is started
// FUNNELED (one thread calls it) and the kernel's OpenMP team includes that thread; the
// exchange of a block costs microseconds against the block's O(n_local x n_block) pairs.
#include "parallel/direct_ring.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include "core/aligned_vector.hpp"
#include "gravity/direct_simd_kernels.hpp"
#include "gravity/unit_scaling.hpp"
#include "nbody/error.hpp"

namespace nbody::parallel {
namespace {

using simd::kBlock;
using simd::KernelArgs;

template <class Real>
class Ring final : public DirectRing {
 public:
  Ring(double G, double softening, int threads)
      : G_(G),
        softening_(softening),
        threads_(threads),
        kernel_(simd::body_kernel<Real>(simd::best_isa())) {}

  void compute_forces(ParticleSystem& ps, bool potential, ForceReducer& comm) override {
    const std::size_t n = ps.size();
    const int parts = comm.parts(), part = comm.part();
    scale(ps, comm);
    pack_targets(ps);
    // The block in hand starts as this rank's own bodies (targets are sources: the self
    // terms are left out of the potentials) and moves one rank on after each pass.
    block_.assign(n * 4, Real(0));
    for (std::size_t i = 0; i < n; ++i) {
      block_[4 * i] = tx_[i], block_[4 * i + 1] = ty_[i], block_[4 * i + 2] = tz_[i];
      block_[4 * i + 3] = Real(ps.mass[i] * scale_.mass);
    }
    std::vector<double> ax(n, 0.0), ay(n, 0.0), az(n, 0.0), phi(potential ? n : 0, 0.0);
    stats_ = {};
    for (int pass = 0; pass < parts; ++pass) {
      if (pass > 0) {  // pass the block on: to the next rank, from the previous one
        std::vector<ForceReducer::Bytes> send(static_cast<std::size_t>(parts));
        auto& out = send[std::size_t((part + 1) % parts)];
        out.resize(block_.size() * sizeof(Real));
        if (!out.empty()) std::memcpy(out.data(), block_.data(), out.size());
        stats_.bytes_sent += out.size();
        const auto got = comm.exchange(send);
        const auto& in = got[std::size_t((part + parts - 1) % parts)];
        if (in.size() % (4 * sizeof(Real)) != 0)
          throw Error("direct ring: a travelling block of a broken size arrived");
        block_.resize(in.size() / sizeof(Real));
        if (!in.empty()) std::memcpy(block_.data(), in.data(), in.size());
      }
      if (n > 0 && !block_.empty()) add_block(n, potential, pass == 0, ax, ay, az, phi);
    }
    for (auto* a : {&ps.ax, &ps.ay, &ps.az}) a->resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      ps.ax[i] = G_ * ax[i] * scale_.acceleration;
      ps.ay[i] = G_ * ay[i] * scale_.acceleration;
      ps.az[i] = G_ * az[i] * scale_.acceleration;
    }
    ps.set_accelerations_valid();
    if (potential) {
      ps.potential.resize(n);
      for (std::size_t i = 0; i < n; ++i) ps.potential[i] = G_ * phi[i] * scale_.potential;
      ps.set_potentials_valid();
    } else {
      ps.invalidate_potentials();
    }
  }

  [[nodiscard]] RingStats stats() const override { return stats_; }

 private:
  /// The one-process direct sum's scaling (unit_scaling.hpp), from the extents of all
  /// ranks, so that every rank scales the blocks alike.
  void scale(const ParticleSystem& ps, ForceReducer& comm) {
    double mine[2] = {std::isfinite(softening_) ? std::abs(softening_) : 0.0, 0.0};
    for (const auto* v : {&ps.x, &ps.y, &ps.z}) mine[0] = largest_finite_magnitude(*v, mine[0]);
    mine[1] = largest_finite_magnitude(ps.mass, 0.0);
    ForceReducer::Bytes bytes(sizeof mine);
    std::memcpy(bytes.data(), mine, sizeof mine);
    double extent = 0, mass = 0;
    for (const auto& b : comm.all_gather(bytes)) {
      if (b.size() != sizeof mine) throw Error("direct ring: a rank sent a broken extent");
      double theirs[2];
      std::memcpy(theirs, b.data(), sizeof theirs);
      extent = std::max(extent, theirs[0]);
      mass = std::max(mass, theirs[1]);
    }
    scale_ = power_of_two_scaling(extent, mass);
  }

  /// The local bodies as the kernel's targets, padded to whole i-blocks (padding on the
  /// last body: its results are dropped).
  void pack_targets(const ParticleSystem& ps) {
    const std::size_t n = ps.size(), padded = (n + kBlock - 1) / kBlock * kBlock;
    for (auto* v : {&tx_, &ty_, &tz_, &ax_, &ay_, &az_, &phi_}) v->resize(padded);
    for (std::size_t i = 0; i < padded; ++i) {
      const std::size_t s = std::min(i, n - 1);
      tx_[i] = Real(ps.x[s] * scale_.position);
      ty_[i] = Real(ps.y[s] * scale_.position);
      tz_[i] = Real(ps.z[s] * scale_.position);
    }
  }

  /// The block in hand's forces on the local bodies, added to the double totals. The own
  /// block (pass 0) is the targets themselves: self_first 0 leaves each body's own term
  /// out of its potential; another rank's block has no target among its sources.
  void add_block(std::size_t n, bool potential, bool own, std::vector<double>& ax,
                 std::vector<double>& ay, std::vector<double>& az, std::vector<double>& phi) {
    const std::size_t m = block_.size() / 4;
    xs_.resize(m), ys_.resize(m), zs_.resize(m), ms_.resize(m);
    for (std::size_t j = 0; j < m; ++j) {
      xs_[j] = block_[4 * j], ys_[j] = block_[4 * j + 1], zs_[j] = block_[4 * j + 2];
      ms_[j] = block_[4 * j + 3];
    }
    const Real eps = Real(softening_ * scale_.position);
    const KernelArgs<Real> args{.x = xs_.data(),
                                .y = ys_.data(),
                                .z = zs_.data(),
                                .m = ms_.data(),
                                .n = m,
                                .eps2 = eps * eps,
                                .ax = ax_.data(),
                                .ay = ay_.data(),
                                .az = az_.data(),
                                .tx = tx_.data(),
                                .ty = ty_.data(),
                                .tz = tz_.data(),
                                .phi = potential ? phi_.data() : nullptr,
                                .self_first = own ? 0 : m};
    simd::run_blocks(kernel_, args, 0, static_cast<std::ptrdiff_t>(tx_.size() / kBlock), threads_);
    stats_.pairs += std::uint64_t(tx_.size()) * m;
    for (std::size_t i = 0; i < n; ++i) {
      ax[i] += double(ax_[i]), ay[i] += double(ay_[i]), az[i] += double(az_[i]);
      if (potential) phi[i] += double(phi_[i]);
    }
  }

  double G_, softening_;
  int threads_;
  simd::BodyKernel<Real> kernel_;
  Scaling scale_;
  AlignedVector<Real> tx_, ty_, tz_, ax_, ay_, az_, phi_, xs_, ys_, zs_, ms_;
  std::vector<Real> block_;  // the block in hand: x y z m interleaved, scaled
  RingStats stats_;
};

}  // namespace

std::unique_ptr<DirectRing> make_direct_ring(Precision precision, double G, double softening,
                                             int threads) {
  if (precision == Precision::Float) return std::make_unique<Ring<float>>(G, softening, threads);
  return std::make_unique<Ring<double>>(G, softening, threads);
}

}  // namespace nbody::parallel
