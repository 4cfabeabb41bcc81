// Bodies moving to the rank that owns their key (domain.hpp's migrate), and the census that
// checks none was lost or doubled on the way.
//
// One buffer per destination: a header, then one record per body (every per-body field of
// ParticleSystem, its key, and its cost when the caller keeps costs). The receiver checks
// the header and the size before reading a byte of the records, and that every key is its.
#include <algorithm>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "nbody/error.hpp"
#include "parallel/body_fields.hpp"
#include "parallel/domain.hpp"

namespace nbody::parallel {
namespace {

using Bytes = ForceReducer::Bytes;

constexpr std::uint32_t kMagic = 0x474d424e;  // "NBMG"
// Header flags.
constexpr std::uint32_t kHasCost = 1, kAccelerationsValid = 2, kHasPotential = 4,
                        kPotentialsValid = 8,
                        kRefused = 16;  // the sender's own input was bad: no bodies, it throws

struct Header {
  std::uint32_t magic = kMagic, flags = 0;
  std::int32_t dim = 3, sender = 0;
  std::uint64_t count = 0;
};

std::size_t record_bytes(bool has_cost) {
  return kBodyDoubles * sizeof(double) + 2 * sizeof(std::uint64_t) +
         (has_cost ? sizeof(double) : 0);
}

template <class T>
void put(char*& at, T v) {
  std::memcpy(at, &v, sizeof v);
  at += sizeof v;
}
template <class T>
T take(const char*& at) {
  T v;
  std::memcpy(&v, at, sizeof v);
  at += sizeof v;
  return v;
}

// Why this rank's input cannot migrate (empty when it can).
std::string input_problem(const ParticleSystem& ps, const std::vector<std::uint64_t>& keys,
                          const std::vector<double>* cost, const DomainCuts& cuts, int parts) {
  const std::size_t n = ps.size();
  if (cuts.parts() != parts)
    return fmt::format("cuts of {} pieces for {} ranks", cuts.parts(), parts);
  if (keys.size() != n) return fmt::format("{} keys for {} bodies", keys.size(), n);
  if (cost && cost->size() != n) return fmt::format("{} costs for {} bodies", cost->size(), n);
  for (auto* v :
       {&ps.y, &ps.z, &ps.vx, &ps.vy, &ps.vz, &ps.ax, &ps.ay, &ps.az, &ps.mass, &ps.radius})
    if (v->size() != n)
      return fmt::format("a body array of {} entries for {} bodies", v->size(), n);
  if (ps.id.size() != n) return fmt::format("{} ids for {} bodies", ps.id.size(), n);
  return {};
}

// Appends one sender's buffer to `local` (validated first: nothing is appended on error).
void unpack(const Bytes& buf, int from, int me, ParticleSystem& local,
            std::vector<std::uint64_t>& keys, std::vector<double>* cost, const DomainCuts& cuts,
            bool& has_potential, bool& acc_valid, bool& pot_valid, bool& contributed) {
  if (buf.empty()) return;  // nothing from this rank
  auto bad = [&](const std::string& what) {
    return Error(fmt::format("migrate: rank {} got a malformed buffer from rank {} ({} bytes): {}",
                             me, from, buf.size(), what));
  };
  if (buf.size() < sizeof(Header)) throw bad("shorter than its header");
  Header h;
  std::memcpy(&h, buf.data(), sizeof h);
  if (h.magic != kMagic) throw bad("not a migration buffer");
  if (h.flags & kRefused)
    throw Error(fmt::format("migrate: rank {} could not send its bodies", from));
  if (h.sender != from) throw bad(fmt::format("signed by rank {}", h.sender));
  if (h.dim != local.dim) throw bad(fmt::format("dim {}, not {}", h.dim, local.dim));
  if (bool(h.flags & kHasCost) != (cost != nullptr)) throw bad("costs sent by one side only");
  const std::size_t rec = record_bytes(cost != nullptr);
  const std::size_t body = buf.size() - sizeof(Header);
  if (body % rec != 0 || body / rec != h.count)
    throw bad(fmt::format("{} bodies announced, {} bytes of records", h.count, body));
  const std::size_t n = local.size(), m = h.count;
  // Every key must be this rank's before anything is appended.
  const std::size_t key_at = kBodyDoubles * sizeof(double) + sizeof(std::uint64_t);
  for (std::size_t i = 0; i < m; ++i) {
    std::uint64_t key;
    std::memcpy(&key, buf.data() + sizeof(Header) + i * rec + key_at, sizeof key);
    if (cuts.owner(key) != me)
      throw bad(fmt::format("body {} has key {}, owned by rank {}", i, key, cuts.owner(key)));
  }
  if (m == 0) return;
  contributed = true;
  acc_valid = acc_valid && (h.flags & kAccelerationsValid);
  pot_valid = pot_valid && (h.flags & kPotentialsValid);
  has_potential = has_potential && (h.flags & kHasPotential);
  for (auto* f : body_fields(local)) f->resize(n + m);
  local.id.resize(n + m);
  keys.resize(n + m);
  if (cost) cost->resize(n + m);
  const char* at = buf.data() + sizeof(Header);
  const auto fields = body_fields(local);
  for (std::size_t i = n; i < n + m; ++i) {
    for (auto* f : fields) (*f)[i] = take<double>(at);
    local.id[i] = take<std::uint64_t>(at);
    keys[i] = take<std::uint64_t>(at);
    if (cost) (*cost)[i] = take<double>(at);
  }
}

std::uint64_t mix(std::uint64_t z) {  // splitmix64's finaliser
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

MigrationStats migrate(ParticleSystem& local, std::vector<std::uint64_t>& keys,
                       std::vector<double>* cost, const DomainCuts& cuts, ForceReducer& comm) {
  const int parts = comm.parts(), me = comm.part();
  const std::size_t n = local.size();
  const std::string problem = input_problem(local, keys, cost, cuts, parts);
  const bool has_potential = local.potential.size() == n;
  std::vector<Bytes> send(static_cast<std::size_t>(parts));
  MigrationStats stats;
  std::vector<int> dest(problem.empty() ? n : 0);
  if (!problem.empty()) {
    // Still take part (the others would wait for this rank), telling them why nothing came.
    Header h;
    h.flags = kRefused, h.dim = local.dim, h.sender = me;
    for (int p = 0; p < parts; ++p) {
      if (p == me) continue;
      send[std::size_t(p)].resize(sizeof h);
      std::memcpy(send[std::size_t(p)].data(), &h, sizeof h);
    }
  } else {
    std::vector<std::size_t> count(std::size_t(parts), 0);
    for (std::size_t i = 0; i < n; ++i) ++count[std::size_t(dest[i] = cuts.owner(keys[i]))];
    const std::size_t rec = record_bytes(cost != nullptr);
    std::uint32_t flags = (cost ? kHasCost : 0) | (has_potential ? kHasPotential : 0) |
                          (local.accelerations_valid() ? kAccelerationsValid : 0) |
                          (local.potentials_valid() ? kPotentialsValid : 0);
    std::vector<char*> at(std::size_t(parts), nullptr);
    for (int p = 0; p < parts; ++p) {
      const auto u = std::size_t(p);
      if (p == me || count[u] == 0) continue;
      const Header h{kMagic, flags, local.dim, me, count[u]};
      send[u].resize(sizeof h + count[u] * rec);
      std::memcpy(send[u].data(), &h, sizeof h);
      at[u] = send[u].data() + sizeof h;
      stats.sent += count[u], stats.bytes_sent += send[u].size();
    }
    const auto fields = body_fields(local);
    for (std::size_t i = 0; i < n; ++i) {
      if (dest[i] == me) continue;
      char*& w = at[std::size_t(dest[i])];
      for (int f = 0; f < kBodyDoubles - 1; ++f) put(w, (*fields[f])[i]);
      put(w, has_potential ? local.potential[i] : 0.0);
      put(w, local.id[i]);
      put(w, keys[i]);
      if (cost) put(w, (*cost)[i]);
    }
  }
  const auto received = comm.exchange(send);
  if (!problem.empty()) throw Error(fmt::format("migrate: rank {}: {}", me, problem));

  // The bodies that stay, in order (one compaction per array).
  if (stats.sent > 0) {
    auto compact = [&](auto& v) {
      std::size_t kept = 0;
      for (std::size_t i = 0; i < n; ++i)
        if (dest[i] == me) v[kept++] = v[i];
      v.resize(kept);
    };
    const auto fields = body_fields(local);
    for (int f = 0; f < kBodyDoubles - 1; ++f) compact(*fields[f]);
    if (has_potential) compact(local.potential);
    compact(local.id);
    compact(keys);
    if (cost) compact(*cost);
  }
  if (!has_potential) local.potential.resize(local.size(), 0.0);  // unpack appends to it
  bool keep_potential = has_potential, acc_valid = local.accelerations_valid(),
       pot_valid = local.potentials_valid();
  bool contributed = !local.empty();
  if (!contributed) acc_valid = pot_valid = true;  // an empty rank's flags say nothing
  for (int from = 0; from < parts; ++from) {
    if (from == me) continue;
    unpack(received[std::size_t(from)], from, me, local, keys, cost, cuts, keep_potential,
           acc_valid, pot_valid, contributed);
    stats.received +=
        received[std::size_t(from)].empty()
            ? 0
            : (received[std::size_t(from)].size() - sizeof(Header)) / record_bytes(cost != nullptr);
  }
  if (contributed) {
    if (acc_valid) {
      local.set_accelerations_valid();
    } else {
      local.invalidate_accelerations();
    }
    if (acc_valid && pot_valid && keep_potential) {
      local.set_potentials_valid();
    } else {
      local.invalidate_potentials();
    }
  }
  if (!keep_potential) local.potential.clear();
  return stats;
}

Census census(const ParticleSystem& local, ForceReducer& comm) {
  Census mine;
  mine.count = local.id.size();
  for (std::uint64_t id : local.id) mine.id_sum += id, mine.id_xor ^= id, mine.id_hash += mix(id);
  Bytes bytes(sizeof mine);
  std::memcpy(bytes.data(), &mine, sizeof mine);
  Census all;
  for (const auto& b : comm.all_gather(bytes)) {
    if (b.size() != sizeof(Census)) throw Error("census: a rank sent a malformed census");
    Census c;
    std::memcpy(&c, b.data(), sizeof c);
    all.count += c.count, all.id_sum += c.id_sum, all.id_xor ^= c.id_xor, all.id_hash += c.id_hash;
  }
  return all;
}

void check_census(const Census& before, const Census& after, const char* where) {
  std::string changed;
  auto note = [&](const char* what, std::uint64_t b, std::uint64_t a) {
    if (a != b) changed += fmt::format("{}{} {} -> {}", changed.empty() ? "" : ", ", what, b, a);
  };
  note("bodies", before.count, after.count);
  note("id sum", before.id_sum, after.id_sum);
  note("id xor", before.id_xor, after.id_xor);
  note("id hash sum", before.id_hash, after.id_hash);
  if (!changed.empty())
    throw Error(
        fmt::format("{}: ownership census changed (a body lost or doubled): {}", where, changed));
}

}  // namespace nbody::parallel
