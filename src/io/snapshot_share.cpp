// read_snapshot_share (snapshot.hpp): each rank reads the rows of its share of a snapshot
// alone, and every rank refuses what any rank finds (none waits in a collective for one
// that threw).

#include <cstdint>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include "io/snapshot_rows.hpp"
#include "nbody/distributed.hpp"
#include "nbody/error.hpp"
#include "nbody/gravity.hpp"
#include "nbody/snapshot.hpp"

namespace nbody {

namespace fs = std::filesystem;

namespace {

/// Collective: every rank throws the first problem any rank had ("" none), prefixed.
void throw_what_any_found(ForceReducer& group, const std::string& problem,
                          const std::string& prefix) {
  for (const auto& said : group.all_gather(ForceReducer::Bytes(problem.begin(), problem.end())))
    if (!said.empty()) throw Error(prefix + std::string(said.begin(), said.end()));
}

/// Ids unique over every rank's share (`first`: the share's first body over the file): each
/// id goes to rank id % P, which looks for repeats; every rank then throws the first repeat
/// any found, worded as check_unique_ids words it (collective).
void check_unique_ids_over(const fs::path& path, const ParticleSystem& ps, std::uint64_t first,
                           ForceReducer& group) {
  const auto parts = static_cast<std::uint64_t>(group.parts());
  std::vector<ForceReducer::Bytes> out(static_cast<std::size_t>(parts));
  for (std::size_t i = 0; i < ps.size(); ++i) {
    const std::uint64_t record[2] = {ps.id[i], first + i};
    auto& bytes = out[static_cast<std::size_t>(ps.id[i] % parts)];
    const auto* p = reinterpret_cast<const char*>(record);
    bytes.insert(bytes.end(), p, p + sizeof record);
  }
  std::unordered_map<std::uint64_t, std::uint64_t> first_use;
  std::string problem;
  for (const auto& bytes : group.exchange(out)) {
    for (std::size_t at = 0; problem.empty() && at + 16 <= bytes.size(); at += 16) {
      std::uint64_t record[2];
      std::memcpy(record, bytes.data() + at, sizeof record);
      const auto [it, inserted] = first_use.emplace(record[0], record[1]);
      if (!inserted) problem = io_detail::repeated_id(record[0], it->second, record[1]);
    }
  }
  throw_what_any_found(group, problem, path.string() + ": ");
}

}  // namespace

ParticleSystem read_snapshot_share(const fs::path& path, ForceReducer& group, std::size_t& total) {
  // A rank that cannot read its rows says why to every rank, which all throw it: none is
  // left waiting in a collective for one that threw.
  ParticleSystem ps;
  std::string problem;
  try {
    ps = io_detail::read_snapshot_rows(path, &group, total);
  } catch (const Error& e) {
    problem = e.what();
  }
  throw_what_any_found(group, problem, "");
  check_unique_ids_over(path, ps, share_range(total, group.part(), group.parts()).first, group);
  return ps;
}

}  // namespace nbody
