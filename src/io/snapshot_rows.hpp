#pragma once
// The snapshot reader's rows (snapshot_format.cpp), for read_snapshot and for the shares
// of several ranks (snapshot_share.cpp).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "nbody/distributed.hpp"
#include "nbody/particles.hpp"

namespace nbody::io_detail {

/// read_snapshot's work for the bodies share_range(N, part, parts) of `group` (gravity.hpp;
/// all N without a group): their values checked, their ids checked unique when there is no
/// group (with one: the caller checks them over the shares) or numbered from the share's
/// first body + 1 when the file has none. `total` gets N.
[[nodiscard]] ParticleSystem read_snapshot_rows(const std::filesystem::path& path,
                                                ForceReducer* group, std::size_t& total);

/// The message for an id that bodies a and b (over the file, types in order) share.
inline std::string repeated_id(std::uint64_t id, std::uint64_t a, std::uint64_t b) {
  return fmt::format(
      "ParticleIDs: id {} is used twice (bodies {} and {}, counted over PartType0..5 in order)", id,
      std::min(a, b), std::max(a, b));
}

}  // namespace nbody::io_detail
