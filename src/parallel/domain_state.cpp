// The whole state of a decomposed run (domain_state.hpp).
#include "parallel/domain_state.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

#include "nbody/error.hpp"
#include "nbody/gravity.hpp"
#include "nbody/physics/moments.hpp"

namespace nbody::parallel {
namespace {

using Bytes = ForceReducer::Bytes;

/// One body's record in a gather: 11 doubles (x, v, a, m, r), the potential, the id.
constexpr std::size_t kRecord = 12 * sizeof(double) + sizeof(std::uint64_t);

std::vector<const std::vector<double>*> fields(const ParticleSystem& ps) {
  return {&ps.x,  &ps.y,  &ps.z,  &ps.vx,   &ps.vy,    &ps.vz,
          &ps.ax, &ps.ay, &ps.az, &ps.mass, &ps.radius};
}

}  // namespace

ParticleSystem keep_share(const ParticleSystem& all, int part, int parts) {
  const ShareRange r = share_range(all.size(), part, parts);
  ParticleSystem ps = all;
  auto cut = [&](auto& v) {
    if (v.size() != all.size()) return;  // absent (no accelerations, no potentials)
    v.erase(v.begin() + std::ptrdiff_t(r.last), v.end());
    v.erase(v.begin(), v.begin() + std::ptrdiff_t(r.first));
  };
  for (auto* v : {&ps.x, &ps.y, &ps.z, &ps.vx, &ps.vy, &ps.vz, &ps.ax, &ps.ay, &ps.az,
                  &ps.potential, &ps.mass, &ps.radius})
    cut(*v);
  cut(ps.id);
  return ps;
}

ParticleSystem gather_bodies(const ParticleSystem& local, ForceReducer& comm) {
  const std::size_t n = local.size();
  const bool acc = local.accelerations_valid() && local.ax.size() == n;
  const bool phi = local.potentials_valid() && local.potential.size() == n;
  Bytes mine(2 + n * kRecord);
  mine[0] = char(acc), mine[1] = char(phi);
  char* at = mine.data() + 2;
  for (std::size_t i = 0; i < n; ++i) {
    for (const auto* f : fields(local)) {
      const double v = f->size() == n ? (*f)[i] : 0.0;
      std::memcpy(at, &v, sizeof v), at += sizeof v;
    }
    const double p = phi ? local.potential[i] : 0.0;
    std::memcpy(at, &p, sizeof p), at += sizeof p;
    std::memcpy(at, &local.id[i], sizeof(std::uint64_t)), at += sizeof(std::uint64_t);
  }
  const auto all = comm.all_gather(mine);
  ParticleSystem out;
  out.dim = local.dim;
  out.time = local.time;
  bool all_acc = true, all_phi = true;
  std::size_t total = 0;
  for (const Bytes& b : all) {
    if (b.size() < 2 || (b.size() - 2) % kRecord != 0)
      throw Error(fmt::format("gathering the bodies: a rank sent {} bytes", b.size()));
    total += (b.size() - 2) / kRecord;
  }
  out.resize(total);
  out.potential.resize(total);
  std::size_t k = 0;
  for (const Bytes& b : all) {
    all_acc = all_acc && b[0] != 0;
    all_phi = all_phi && b[1] != 0;
    const char* from = b.data() + 2;
    for (std::size_t i = 0; i < (b.size() - 2) / kRecord; ++i, ++k) {
      for (auto* f : {&out.x, &out.y, &out.z, &out.vx, &out.vy, &out.vz, &out.ax, &out.ay, &out.az,
                      &out.mass, &out.radius, &out.potential}) {
        std::memcpy(&(*f)[k], from, sizeof(double)), from += sizeof(double);
      }
      std::memcpy(&out.id[k], from, sizeof(std::uint64_t)), from += sizeof(std::uint64_t);
    }
  }
  // Id order: the order one process keeps its bodies in.
  std::vector<std::size_t> order(total);
  std::iota(order.begin(), order.end(), std::size_t(0));
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return out.id[a] < out.id[b]; });
  ParticleSystem sorted = out;
  for (std::size_t j = 0; j < total; ++j) {
    const std::size_t s = order[j];
    for (auto [to, from] : {std::pair{&sorted.x, &out.x},
                            {&sorted.y, &out.y},
                            {&sorted.z, &out.z},
                            {&sorted.vx, &out.vx},
                            {&sorted.vy, &out.vy},
                            {&sorted.vz, &out.vz},
                            {&sorted.ax, &out.ax},
                            {&sorted.ay, &out.ay},
                            {&sorted.az, &out.az},
                            {&sorted.mass, &out.mass},
                            {&sorted.radius, &out.radius},
                            {&sorted.potential, &out.potential}})
      (*to)[j] = (*from)[s];
    sorted.id[j] = out.id[s];
  }
  if (!all_phi) sorted.potential.clear();
  if (all_acc) {
    sorted.set_accelerations_valid();
    if (all_phi) sorted.set_potentials_valid();
  } else {
    sorted.invalidate_accelerations();
  }
  return sorted;
}

Diagnostics summed_diagnostics(const ParticleSystem& local, ForceReducer& comm, bool potentials) {
  double sums[kMomentSums + 2] = {};
  double(&moments)[kMomentSums] = *reinterpret_cast<double(*)[kMomentSums]>(sums);
  for (std::size_t i = 0; i < local.size(); ++i) {
    add_body_moments(moments, local.mass[i], local.x[i], local.y[i], local.z[i], local.vx[i],
                     local.vy[i], local.vz[i]);
    if (potentials) sums[kMomentSums + 1] += local.mass[i] * local.potential[i];
  }
  sums[kMomentSums] = kinetic_energy(local);
  comm.sum(sums, kMomentSums + 2);
  Diagnostics d = diagnostics_from_sums(moments, sums[kMomentSums], 0.5 * sums[kMomentSums + 1]);
  d.energy_method = potentials ? EnergyMethod::Solver : EnergyMethod::Off;
  return d;
}

std::size_t total_bodies(const ParticleSystem& local, ForceReducer& comm) {
  double n = double(local.size());
  comm.sum(&n, 1);
  return std::size_t(n);
}

}  // namespace nbody::parallel
