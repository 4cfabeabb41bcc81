// Agreement over the ranks that read or write one file in shares (share_checks.hpp).
#include "io/share_checks.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <tuple>
#include <unordered_map>

#include "nbody/error.hpp"

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace nbody::io_detail {

namespace {

using Bytes = ForceReducer::Bytes;

void append(Bytes& out, const void* data, std::size_t size) {
  const auto* p = static_cast<const char*>(data);
  out.insert(out.end(), p, p + size);
}

std::uint64_t word_at(const Bytes& bytes, std::size_t at) {
  std::uint64_t w = 0;
  std::memcpy(&w, bytes.data() + at, sizeof w);
  return w;
}

}  // namespace

std::string first_found(ForceReducer& group, const std::string& problem) {
  for (const auto& said : group.all_gather(Bytes(problem.begin(), problem.end())))
    if (!said.empty()) return std::string(said.begin(), said.end());
  return {};
}

std::vector<std::uint64_t> every_rank_count(ForceReducer& group, std::uint64_t count) {
  Bytes mine(sizeof count);
  std::memcpy(mine.data(), &count, sizeof count);
  std::vector<std::uint64_t> all;
  for (const Bytes& said : group.all_gather(mine)) {
    if (said.size() != sizeof count) throw Error("a rank sent a malformed count of rows");
    all.push_back(word_at(said, 0));
  }
  return all;
}

void throw_what_any_found(ForceReducer& group, const std::string& problem,
                          const std::string& prefix) {
  if (std::string found = first_found(group, problem); !found.empty()) throw Error(prefix + found);
}

void throw_first_in_file(ForceReducer* group, const std::optional<Found>& found) {
  if (group == nullptr) {
    if (found) throw Error(found->message);
    return;
  }
  Bytes mine;
  if (found) {  // stage, row, then the message
    append(mine, &found->stage, sizeof found->stage);
    append(mine, &found->row, sizeof found->row);
    mine.insert(mine.end(), found->message.begin(), found->message.end());
  }
  std::optional<Found> first;
  for (const Bytes& said : group->all_gather(mine)) {
    if (said.size() < 16) continue;
    Found f{word_at(said, 0), word_at(said, 8), std::string(said.begin() + 16, said.end())};
    if (!first || std::tie(f.stage, f.row) < std::tie(first->stage, first->row))
      first = std::move(f);
  }
  if (first) throw Error(first->message);
}

namespace {

/// The exact search (each id's first row kept in a hash map): every record (id, row) at rank
/// id mod P. Within a rank the rows arrive in order (ranks in order, each rank's rows in
/// order), so the first repeat seen there has the least `again` of that rank's ids, and its
/// first use.
std::optional<RepeatedId> exact_repeat(const std::vector<std::uint64_t>& ids,
                                       std::uint64_t first_row, ForceReducer* group,
                                       bool zero_is_none) {
  const std::uint64_t parts = group ? std::uint64_t(group->parts()) : 1;
  std::vector<Bytes> out(parts);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (zero_is_none && ids[i] == 0) continue;
    const std::uint64_t record[2] = {ids[i], first_row + i};
    append(out[ids[i] % parts], record, sizeof record);
  }
  std::unordered_map<std::uint64_t, std::uint64_t> first_use;
  std::optional<RepeatedId> found;
  for (const Bytes& bytes : group ? group->exchange(out) : out) {
    for (std::size_t at = 0; !found && at + 16 <= bytes.size(); at += 16) {
      const std::uint64_t id = word_at(bytes, at), row = word_at(bytes, at + 8);
      const auto [it, inserted] = first_use.emplace(id, row);
      if (!inserted) found = RepeatedId{id, it->second, row};
    }
  }
  if (group == nullptr) return found;
  Bytes mine(found ? sizeof *found : 0);
  if (found) std::memcpy(mine.data(), &*found, sizeof *found);
  std::optional<RepeatedId> first;
  for (const Bytes& said : group->all_gather(mine)) {
    if (said.size() != sizeof(RepeatedId)) continue;
    RepeatedId r;
    std::memcpy(&r, said.data(), sizeof r);
    if (!first || r.again < first->again) first = r;
  }
  return first;
}

/// Threads to mark ids with: the machine's, at most 16 (a share's ids are a few GB at most).
int marking_threads() {
#if defined(_OPENMP)
  return std::clamp(omp_get_num_procs(), 1, 16);
#else
  return 1;
#endif
}

/// Ids a rank sends per round of any_repeat's dense check: 16 MB, which the allocator keeps
/// and gives back the next round (at 2^29 ids a rank, one exchange of all of them made 8.6 GB
/// of new buffers, and new memory is slow on the machines measured: docs/snapshots.md).
constexpr std::size_t kRoundIds = std::size_t(1) << 21;

/// Marks each of this rank's ids in a bitmap of the whole range [lo, lo + 64 words) (threads
/// and atomic ors: a repeat within the rank is a bit found set), then every rank takes its
/// P-th of every rank's bitmap, where a bit set by two ranks is a repeat across ranks
/// (collective). At 2^30 ids numbered from 1, a bitmap of 128 MB a rank: one exchange of
/// it instead of a rank's 2^29 ids in 256 rounds (17 s on 2 H200 hosts' ranks).
bool marked_twice(const std::vector<std::uint64_t>& ids, std::uint64_t lo, std::uint64_t words,
                  ForceReducer* group, bool zero_is_none) {
  std::vector<std::uint64_t> bits(words, 0);
  bool repeat = false;
  const auto n = std::int64_t(ids.size());
#pragma omp parallel for reduction(||        \
                                   : repeat) \
    num_threads(marking_threads()) if (n >= (std::int64_t(1) << 20))
  for (std::int64_t i = 0; i < n; ++i) {
    if (zero_is_none && ids[std::size_t(i)] == 0) continue;
    const std::uint64_t k = ids[std::size_t(i)] - lo, bit = std::uint64_t(1) << (k % 64);
    const std::uint64_t was =
        std::atomic_ref<std::uint64_t>(bits[k / 64]).fetch_or(bit, std::memory_order_relaxed);
    if ((was & bit) != 0) repeat = true;
  }
  if (group == nullptr) return repeat;
  const auto parts = std::size_t(group->parts());
  const std::size_t share = (words + parts - 1) / parts;  // words of each rank's part
  std::vector<Bytes> out(parts);
  for (std::size_t p = 0; p < parts; ++p) {
    const std::size_t begin = std::min(words, p * share), end = std::min(words, begin + share);
    append(out[p], bits.data() + begin, (end - begin) * sizeof(std::uint64_t));
  }
  std::vector<std::uint64_t>().swap(bits);
  std::vector<std::uint64_t> seen(share, 0);
  for (const Bytes& b : group->exchange(out)) {
    for (std::size_t k = 0; k < seen.size() && 8 * k + 8 <= b.size(); ++k) {
      const std::uint64_t w = word_at(b, 8 * k);
      repeat = repeat || (seen[k] & w) != 0;
      seen[k] |= w;
    }
  }
  return repeat;  // this rank's finding (any_repeat agrees them)
}

/// Is any id repeated (collective)? Where the ids' range [lo, hi] is at most 8 bits an id
/// (a file numbered from 1 is 1), marked_twice; where at most 64, each id goes, without its
/// row, to the rank that holds its part of the range (P equal parts), which marks it in a
/// bitmap of that part, in rounds of kRoundIds ids a rank; else all at once, and it sorts
/// them. 8 bytes an id sent and a bit an id held, against 16 and a hash map's ~50 for the
/// exact search: measured at 2^30 bodies on 4 ranks, the exact search took longer than a
/// snapshot's writing.
bool any_repeat(const std::vector<std::uint64_t>& ids, ForceReducer* group, bool zero_is_none) {
  std::uint64_t range[3] = {~std::uint64_t(0), 0, 0};  // lo, hi, count
  for (const std::uint64_t id : ids) {
    if (zero_is_none && id == 0) continue;
    range[0] = std::min(range[0], id), range[1] = std::max(range[1], id), ++range[2];
  }
  const std::uint64_t parts = group ? std::uint64_t(group->parts()) : 1;
  if (group) {
    Bytes mine(sizeof range);
    std::memcpy(mine.data(), range, sizeof range);
    std::uint64_t all[3] = {~std::uint64_t(0), 0, 0};
    for (const Bytes& said : group->all_gather(mine)) {
      if (said.size() != sizeof range) throw Error("id check: a rank sent a malformed range");
      std::uint64_t r[3];
      std::memcpy(r, said.data(), sizeof r);
      all[0] = std::min(all[0], r[0]), all[1] = std::max(all[1], r[1]), all[2] += r[2];
    }
    std::memcpy(range, all, sizeof range);
  }
  if (range[2] < 2) return false;
  const std::uint64_t lo = range[0], span = range[1] - range[0];  // span + 1 ids may be used
  const std::uint64_t width = span / parts + 1;                   // ids a rank's part spans
  const std::uint64_t base = lo + (group ? std::uint64_t(group->part()) : 0) * width;
  // What this rank sends each rank, of ids [begin, end); then what it received.
  auto exchange = [&](std::size_t begin, std::size_t end) {
    std::vector<std::size_t> count(parts, 0);
    for (std::size_t i = begin; i < end; ++i)
      if (!(zero_is_none && ids[i] == 0)) ++count[(ids[i] - lo) / width];
    std::vector<Bytes> out(parts);
    for (std::uint64_t p = 0; p < parts; ++p) out[p].resize(count[p] * sizeof(std::uint64_t));
    std::fill(count.begin(), count.end(), 0);  // now each part's ids written
    for (std::size_t i = begin; i < end; ++i) {
      if (zero_is_none && ids[i] == 0) continue;
      const std::uint64_t p = (ids[i] - lo) / width;
      std::memcpy(out[p].data() + sizeof(std::uint64_t) * count[p]++, &ids[i], sizeof ids[i]);
    }
    return group ? group->exchange(out) : out;
  };
  bool repeat = false;
  // Every rank decides alike (from the global count), as the exchanges need.
  if (span / 64 < range[2] / 8 + 4096) {
    repeat = marked_twice(ids, lo, span / 64 + 1, group, zero_is_none);
  } else if (width <= 64 * (range[2] / parts) + 4096) {
    std::vector<std::uint64_t> bits(width / 64 + 1, 0);
    const int rounds = int((ids.size() + kRoundIds - 1) / kRoundIds);
    const int all_rounds = group ? group->max(rounds) : rounds;
    for (int r = 0; r < all_rounds; ++r) {
      const std::size_t begin = std::min(ids.size(), std::size_t(r) * kRoundIds);
      for (const Bytes& b : exchange(begin, std::min(ids.size(), begin + kRoundIds))) {
        for (std::size_t at = 0; !repeat && at + 8 <= b.size(); at += 8) {
          const std::uint64_t k = word_at(b, at) - base, bit = std::uint64_t(1) << (k % 64);
          repeat = (bits[k / 64] & bit) != 0;
          bits[k / 64] |= bit;
        }
      }
    }
  } else {
    std::vector<std::uint64_t> all;
    for (const Bytes& b : exchange(0, ids.size()))
      for (std::size_t at = 0; at + 8 <= b.size(); at += 8) all.push_back(word_at(b, at));
    std::sort(all.begin(), all.end());
    repeat = std::adjacent_find(all.begin(), all.end()) != all.end();
  }
  return group ? group->max(repeat ? 1 : 0) != 0 : repeat;
}

}  // namespace

std::optional<RepeatedId> first_repeated_id(const std::vector<std::uint64_t>& ids,
                                            std::uint64_t first_row, ForceReducer* group,
                                            bool zero_is_none) {
  // The cheap test first; the exact search, which names the rows, only for a repeat.
  if (!any_repeat(ids, group, zero_is_none)) return std::nullopt;
  return exact_repeat(ids, first_row, group, zero_is_none);
}

}  // namespace nbody::io_detail
