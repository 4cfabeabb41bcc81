#pragma once
// What the ranks reading or writing one file in shares agree on (snapshot_share.cpp,
// checkpoint_read.cpp, written_together.cpp): every rank throws what any rank found, so that
// none is left waiting in a collective for one that threw, and the message is the one the
// reader of the whole file gives.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nbody/distributed.hpp"

namespace nbody::io_detail {

/// Collective: the first problem any rank had, in rank order ("" when none), on every rank.
[[nodiscard]] std::string first_found(ForceReducer& group, const std::string& problem);

/// Collective: every rank's `count` (the rows it writes), in rank order.
[[nodiscard]] std::vector<std::uint64_t> every_rank_count(ForceReducer& group, std::uint64_t count);

/// Collective: every rank throws the first problem any rank had ("" none), prefixed.
void throw_what_any_found(ForceReducer& group, const std::string& problem,
                          const std::string& prefix = "");

/// A problem at a place a reader of the whole file meets in order: its check (`stage`, e.g.
/// the dataset's turn), then the row over the file.
struct Found {
  std::uint64_t stage = 0, row = 0;
  std::string message;
};

/// Throws, on every rank, the problem the whole file's reader meets first: the least
/// (stage, row) any rank found. Nothing when none found. Collective with a group; without
/// one (this process holds every row) it throws `found`.
void throw_first_in_file(ForceReducer* group, const std::optional<Found>& found);

/// An id used by two rows over the file, `first` < `again`.
struct RepeatedId {
  std::uint64_t id = 0, first = 0, again = 0;
};

/// The repeat the whole file's reader finds first (the least `again`, with the first row of
/// that id) among every rank's `ids` (this rank's from row `first_row` over the file), on
/// every rank: a cheap test for any repeat, then each id at rank id mod P to name the rows. Ids of
/// 0 are left out when `zero_is_none`. Collective with a group; without one, these ids alone.
[[nodiscard]] std::optional<RepeatedId> first_repeated_id(const std::vector<std::uint64_t>& ids,
                                                          std::uint64_t first_row,
                                                          ForceReducer* group, bool zero_is_none);

}  // namespace nbody::io_detail
