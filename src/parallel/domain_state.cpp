// The whole state of a decomposed run (domain_state.hpp).
#include "parallel/domain_state.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "nbody/error.hpp"
#include "nbody/gravity.hpp"
#include "nbody/physics/moments.hpp"
#include "parallel/body_fields.hpp"
#include "parallel/direct_ring.hpp"

namespace nbody::parallel {
namespace {

using Bytes = ForceReducer::Bytes;

/// One body's record in a gather: its doubles (body_fields), then its id.
constexpr std::size_t kRecord = kBodyDoubles * sizeof(double) + sizeof(std::uint64_t);

std::uint64_t id_of(const char* record) {
  std::uint64_t id;
  std::memcpy(&id, record + kBodyDoubles * sizeof(double), sizeof id);
  return id;
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
  for (auto* v : body_fields(ps)) cut(*v);
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
  const auto fields = body_fields(local);
  for (std::size_t i = 0; i < n; ++i) {
    for (const auto* f : fields) {
      const double v = f->size() == n && (f != &local.potential || phi) ? (*f)[i] : 0.0;
      std::memcpy(at, &v, sizeof v), at += sizeof v;
    }
    std::memcpy(at, &local.id[i], sizeof(std::uint64_t)), at += sizeof(std::uint64_t);
  }
  const auto all = comm.all_gather(mine);
  // Every record, in id order: the order one process keeps its bodies in.
  std::vector<const char*> records;
  bool all_acc = true, all_phi = true;
  for (const Bytes& b : all) {
    if (b.size() < 2 || (b.size() - 2) % kRecord != 0)
      throw Error(fmt::format("gathering the bodies: a rank sent {} bytes", b.size()));
    all_acc = all_acc && b[0] != 0;
    all_phi = all_phi && b[1] != 0;
    for (std::size_t r = 2; r < b.size(); r += kRecord) records.push_back(b.data() + r);
  }
  std::sort(records.begin(), records.end(),
            [](const char* a, const char* b) { return id_of(a) < id_of(b); });
  ParticleSystem out;
  out.dim = local.dim;
  out.time = local.time;
  out.resize(records.size());
  const auto to = body_fields(out);
  for (std::size_t k = 0; k < records.size(); ++k) {
    for (int f = 0; f < kBodyDoubles; ++f)
      std::memcpy(&(*to[std::size_t(f)])[k], records[k] + f * sizeof(double), sizeof(double));
    out.id[k] = id_of(records[k]);
  }
  if (!all_phi) out.potential.clear();
  if (all_acc) {
    out.set_accelerations_valid();
    if (all_phi) out.set_potentials_valid();
  }
  return out;
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

Diagnostics exact_diagnostics(const ParticleSystem& local, ForceReducer& comm, double G,
                              double softening) {
  ParticleSystem ps = local;  // the ring writes accelerations and potentials: not the run's
  make_direct_ring(Precision::Double, G, softening, 0)->compute_forces(ps, true, comm);
  Diagnostics d = summed_diagnostics(ps, comm, true);
  d.energy_method = EnergyMethod::Exact;
  return d;
}

std::size_t total_bodies(const ParticleSystem& local, ForceReducer& comm) {
  double n = double(local.size());
  comm.sum(&n, 1);
  return std::size_t(n);
}

}  // namespace nbody::parallel
