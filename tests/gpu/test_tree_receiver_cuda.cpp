// How a GPU rank describes its bodies to the others (TreeForces::describe_bodies, issue 35)
// and the essential tree a sender writes for that description (count_essential's hierarchy of
// the receiver's boxes): the pieces hold every body, the retry with larger pieces works when
// a tree has too many, and the essential tree for the pieces gives the receiver exactly the
// forces of the essential tree for one box around all its bodies (any complete essential
// tree gives every receiver group the cells it opens, so the same interaction lists), while
// holding fewer cells. Every test skips itself without a GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "backend_test.hpp"
#include "core/cuda/launch.cuh"
#include "tree/cuda/tree_gpu.cuh"

namespace nbody {
namespace {

using cuda_tree::BodyPiece;
using cuda_tree::ReceiverBox;
using cuda_tree::TreeForces;
using gpu::Vec4;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

/// A Plummer sphere of total mass 1, float coordinates.
std::vector<Vec4<float>> plummer(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<Vec4<float>> b(n);
  for (auto& x : b) {
    const double r = 1.0 / std::sqrt(std::pow(std::max(u(rng), 1e-12), -2.0 / 3.0) - 1.0);
    const double c = 2 * u(rng) - 1, phi = 6.283185307179586 * u(rng), s = std::sqrt(1 - c * c);
    x = {float(r * s * std::cos(phi)), float(r * s * std::sin(phi)), float(r * c),
         float(1.0 / double(n))};
  }
  return b;
}

void build(TreeForces<float>& f, const std::vector<Vec4<float>>& b) {
  f.reserve(b.size());
  check(cudaMemcpy(f.bodies(), b.data(), b.size() * sizeof(b[0]), cudaMemcpyHostToDevice), "up");
  f.build_only(b.size(), nullptr);
}

/// The bounds of the bodies (the common root box of their domains).
cuda_tree::Bounds bounds_of(const std::vector<Vec4<float>>& all) {
  cuda_tree::Bounds root{};
  for (int d = 0; d < 3; ++d) root.lo[d] = 1e300, root.hi[d] = -1e300;
  for (const auto& x : all) {
    const double q[3] = {x.x, x.y, x.z};
    for (int d = 0; d < 3; ++d) root.lo[d] = std::min(root.lo[d], q[d]);
    for (int d = 0; d < 3; ++d) root.hi[d] = std::max(root.hi[d], q[d]);
  }
  return root;
}

ReceiverBox<float> box_of(const double* lo, const double* hi) {
  return {float(0.5 * (lo[0] + hi[0])), float(0.5 * (lo[1] + hi[1])), float(0.5 * (lo[2] + hi[2])),
          float(0.5 * (hi[0] - lo[0])), float(0.5 * (hi[1] - lo[1])), float(0.5 * (hi[2] - lo[2]))};
}

class GpuReceiverPieces : public ::testing::Test {
 protected:
  void SetUp() override {
    NBODY_SKIP_WITHOUT_GPU();
    gpu::select_gpu();
  }
};

TEST_F(GpuReceiverPieces, HoldEveryBodyAndTheirSmallestAcceleration) {
  constexpr std::size_t kN = 60000;
  const std::vector<Vec4<float>> b = plummer(kN, 3);
  TreeForces<float> f(3, 0.5, false);
  build(f, b);
  // |a_old| of body i: i + 1 (body order), so a piece's smallest and mean lie in [1, n].
  std::vector<float> a(kN);
  for (std::size_t i = 0; i < kN; ++i) a[i] = float(i + 1);
  float* a_old = nullptr;
  check(cudaMalloc(&a_old, kN * sizeof(float)), "a_old");
  check(cudaMemcpy(a_old, a.data(), kN * sizeof(float), cudaMemcpyHostToDevice), "a_old up");
  cuda_tree::PieceScratch scratch;
  // 500 bodies a piece; then 1, below a walk group (raised to one) and more pieces than the
  // description has room for (16384), so that it retries with larger ones.
  for (const unsigned piece : {500u, 1u}) {
    const std::vector<BodyPiece> pieces = f.describe_bodies(a_old, piece, scratch, nullptr);
    std::printf("[ measured ] %u bodies a piece asked: %zu pieces of %zu bodies\n", piece,
                pieces.size(), kN);
    ASSERT_GE(pieces.size(), kN / std::max(piece, cuda_tree::kMaxGroup) / 8);
    ASSERT_LE(pieces.size(), 16384u);
    for (const BodyPiece& p : pieces) {
      for (int d = 0; d < 3; ++d) ASSERT_LE(p.lo[d], p.hi[d]);
      EXPECT_GE(p.a_min, 1.0);
      EXPECT_LE(p.a_min, p.a_mean * (1 + 1e-12));
      EXPECT_LE(p.a_mean, double(kN));
    }
    std::size_t outside = 0;
    for (const auto& x : b) {
      const double q[3] = {x.x, x.y, x.z};
      const bool in = std::any_of(pieces.begin(), pieces.end(), [&](const BodyPiece& p) {
        for (int d = 0; d < 3; ++d)
          if (q[d] < p.lo[d] || q[d] > p.hi[d]) return false;
        return true;
      });
      outside += in ? 0 : 1;
    }
    EXPECT_EQ(outside, 0u) << piece;
  }
  check(cudaFree(a_old), "free");
}

TEST_F(GpuReceiverPieces, EssentialTreeOfThePiecesGivesTheForcesOfOneBox) {
  constexpr std::size_t kN = 120000;
  const std::vector<Vec4<float>> all = plummer(kN, 8);
  std::vector<Vec4<float>> a, b;  // the halves x < 0 and x >= 0: a cell boundary of the root
  for (const auto& x : all) (x.x < 0 ? a : b).push_back(x);
  const cuda_tree::Bounds root = bounds_of(all);
  for (const auto mac : {OpeningCriterion::Geometric, OpeningCriterion::Bmax}) {
    for (const bool quad : {false, true}) {
      const double theta = mac == OpeningCriterion::Bmax ? 0.6 : 0.5;
      TreeForces<float> fa(3, theta, quad, mac), fb(3, theta, quad, mac);
      fa.set_root_box(&root);
      fb.set_root_box(&root);
      build(fa, a);
      build(fb, b);
      cuda_tree::PieceScratch scratch;
      std::vector<ReceiverBox<float>> pieces;
      double lo[3] = {1e300, 1e300, 1e300}, hi[3] = {-1e300, -1e300, -1e300};
      for (const BodyPiece& p : fa.describe_bodies(nullptr, 300, scratch, nullptr)) {
        pieces.push_back(box_of(p.lo, p.hi));
        for (int d = 0; d < 3; ++d)
          lo[d] = std::min(lo[d], p.lo[d]), hi[d] = std::max(hi[d], p.hi[d]);
      }
      const cuda_tree::WalkParams params{theta, quad, false};
      const std::vector<std::vector<ReceiverBox<float>>> receivers = {pieces, {box_of(lo, hi)}};
      const auto counts = fb.count_essential(receivers, params, nullptr);
      ASSERT_EQ(counts.size(), 2u);
      std::printf(
          "[ measured ] %s%s: %zu pieces' essential tree %u cells %u bodies, one box's "
          "%u cells %u bodies\n",
          std::string(to_string(mac)).c_str(), quad ? " quadrupole" : "", pieces.size(),
          counts[0].cells, counts[0].bodies, counts[1].cells, counts[1].bodies);
      EXPECT_LE(counts[0].cells, counts[1].cells);
      EXPECT_LE(counts[0].bodies, counts[1].bodies);
      EXPECT_GT(counts[0].cells, 0u);
      std::vector<Vec4<float>> forces[2];
      for (std::size_t k = 0; k < 2; ++k) {
        void* packed = nullptr;
        check(cudaMalloc(&packed, fb.essential_bytes(counts[k])), "packed");
        fb.write_essential(k, packed, nullptr);
        const auto src = fa.essential_sources(packed, counts[k]);
        fa.walk_sources(a.size(), 0.01f, nullptr, false, &src, false);
        check(cudaDeviceSynchronize(), "walk");
        forces[k].resize(a.size());
        check(cudaMemcpy(forces[k].data(), fa.out(), a.size() * sizeof(Vec4<float>),
                         cudaMemcpyDeviceToHost),
              "down");
        check(cudaFree(packed), "free");
      }
      std::size_t differ = 0;
      for (std::size_t i = 0; i < a.size(); ++i) {
        const auto &p = forces[0][i], &q = forces[1][i];
        differ += p.x == q.x && p.y == q.y && p.z == q.z ? 0 : 1;
      }
      EXPECT_EQ(differ, 0u) << to_string(mac) << (quad ? " quadrupole" : "");
    }
  }
}

/// x's 21-bit Morton key in the cube [lo, lo + edge)^3.
std::uint64_t morton(const Vec4<float>& x, const double* lo, double edge) {
  auto spread = [](std::uint64_t v) {
    v &= 0x1fffff;
    v = (v | v << 32) & 0x1f00000000ffffULL;
    v = (v | v << 16) & 0x1f0000ff0000ffULL;
    v = (v | v << 8) & 0x100f00f00f00f00fULL;
    v = (v | v << 4) & 0x10c30c30c30c30c3ULL;
    return (v | v << 2) & 0x1249249249249249ULL;
  };
  auto cell = [&](double v, int d) {
    return std::uint64_t(std::clamp((v - lo[d]) / edge, 0.0, 1.0 - 1e-12) * double(1u << 21));
  };
  return spread(cell(x.x, 0)) << 2 | spread(cell(x.y, 1)) << 1 | spread(cell(x.z, 2));
}

TEST_F(GpuReceiverPieces, WideCellsSplitSendLess) {
  // Issue 35's experiment with fixed cuts (thread ranks cut by timings, too noisy to judge):
  // a Plummer sphere cut into 4 domains of equal counts along the Morton curve, each a tree
  // in the common root box describing itself in pieces of n/2048 bodies; every sender counts
  // what it would send every receiver. Split mode 1 (cells at or next to the centre of mass
  // down to their walk groups) and 2 (and no runs of their small children) can only send
  // less than mode 0: their pieces lie inside mode 0's.
  const std::size_t n = 2000000, parts = 4;
  const std::vector<Vec4<float>> all = plummer(n, 11);
  const cuda_tree::Bounds root = bounds_of(all);
  double edge = 0;
  for (int d = 0; d < 3; ++d) edge = std::max(edge, root.hi[d] - root.lo[d]);
  edge *= 1.0001;
  std::vector<std::pair<std::uint64_t, std::size_t>> keyed(n);
  for (std::size_t i = 0; i < n; ++i) keyed[i] = {morton(all[i], root.lo, edge), i};
  std::sort(keyed.begin(), keyed.end());
  std::vector<std::vector<Vec4<float>>> dom(parts);
  for (std::size_t k = 0; k < n; ++k) dom[k * parts / n].push_back(all[keyed[k].second]);
  for (const auto mac : {OpeningCriterion::Geometric, OpeningCriterion::Relative}) {
    const double alpha = 0.002;
    std::vector<std::unique_ptr<TreeForces<float>>> trees;
    std::vector<float*> a_old(parts, nullptr);
    for (std::size_t p = 0; p < parts; ++p) {
      trees.push_back(std::make_unique<TreeForces<float>>(3, 0.5, false, mac, alpha));
      trees[p]->set_root_box(&root);
      build(*trees[p], dom[p]);
      // |a| of a Plummer sphere of mass 1 and scale 1 at each body: r / (r^2 + 1)^(3/2).
      std::vector<float> a(dom[p].size());
      for (std::size_t i = 0; i < a.size(); ++i) {
        const auto& x = dom[p][i];
        const double r2 = double(x.x) * x.x + double(x.y) * x.y + double(x.z) * x.z;
        a[i] = float(std::sqrt(r2) / std::pow(r2 + 1.0, 1.5));
      }
      check(cudaMalloc(&a_old[p], a.size() * sizeof(float)), "a_old");
      check(cudaMemcpy(a_old[p], a.data(), a.size() * sizeof(float), cudaMemcpyHostToDevice),
            "a_old up");
    }
    std::uint64_t sent[3][2] = {};
    for (int mode = 0; mode < 3; ++mode) {
      std::vector<std::vector<ReceiverBox<float>>> boxes(parts);
      std::size_t pieces = 0;
      for (std::size_t p = 0; p < parts; ++p) {
        cuda_tree::PieceScratch scratch;
        trees[p]->set_piece_split(mode);
        for (const BodyPiece& piece :
             trees[p]->describe_bodies(a_old[p], unsigned(n / parts / 2048), scratch, nullptr)) {
          ReceiverBox<float> b = box_of(piece.lo, piece.hi);
          b.alpha_a = mac == OpeningCriterion::Relative ? float(alpha * piece.a_min) : 0.0f;
          boxes[p].push_back(b);
        }
        pieces += boxes[p].size();
      }
      for (std::size_t s = 0; s < parts; ++s) {
        for (std::size_t r = 0; r < parts; ++r) {
          if (r == s) continue;
          const auto c =
              trees[s]->count_essential({boxes[r]}, cuda_tree::WalkParams{0.5, false}, nullptr);
          sent[mode][0] += c[0].cells, sent[mode][1] += c[0].bodies;
        }
      }
      std::printf(
          "[ measured ] %s, 2M bodies, 4 domains, split mode %d: %zu pieces; essential "
          "trees %llu cells, %llu bodies\n",
          std::string(to_string(mac)).c_str(), mode, pieces,
          static_cast<unsigned long long>(sent[mode][0]),
          static_cast<unsigned long long>(sent[mode][1]));
    }
    for (int mode = 1; mode < 3; ++mode) {
      EXPECT_LE(sent[mode][0], sent[mode - 1][0]) << to_string(mac) << " mode " << mode;
      EXPECT_LE(sent[mode][1], sent[mode - 1][1]) << to_string(mac) << " mode " << mode;
    }
    for (float* a : a_old) check(cudaFree(a), "free");
  }
}

}  // namespace
}  // namespace nbody
