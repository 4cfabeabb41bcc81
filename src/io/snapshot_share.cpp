// read_snapshot_share (snapshot.hpp): each rank reads the rows of its share of a snapshot
// alone, and every rank refuses what any rank finds (none waits in a collective for one
// that threw).

#include <cstdint>
#include <string>

#include "io/share_checks.hpp"
#include "io/snapshot_rows.hpp"
#include "nbody/distributed.hpp"
#include "nbody/error.hpp"
#include "nbody/gravity.hpp"
#include "nbody/snapshot.hpp"

namespace nbody {

namespace fs = std::filesystem;

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
  io_detail::throw_what_any_found(group, problem);
  // Ids unique over every share, worded as the whole file's reader words the first repeat.
  const auto first = share_range(total, group.part(), group.parts()).first;
  if (const auto r = io_detail::first_repeated_id(ps.id, first, &group, false))
    throw Error(path.string() + ": " + io_detail::repeated_id(r->id, r->first, r->again));
  return ps;
}

}  // namespace nbody
