// Agreement over the ranks that read or write one file in shares (share_checks.hpp).
#include "io/share_checks.hpp"

#include <cstring>
#include <tuple>
#include <unordered_map>

#include "nbody/error.hpp"

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

std::optional<RepeatedId> first_repeated_id(const std::vector<std::uint64_t>& ids,
                                            std::uint64_t first_row, ForceReducer* group,
                                            bool zero_is_none) {
  // Records (id, row) in row order, each at the rank that owns the id; within a rank the
  // rows arrive in order (ranks in order, each rank's rows in order), so the first repeat
  // seen there has the least `again` of that rank's ids, and its first use.
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
  Bytes mine;
  if (found) append(mine, &*found, sizeof *found);
  std::optional<RepeatedId> first;
  for (const Bytes& said : group->all_gather(mine)) {
    if (said.size() != sizeof(RepeatedId)) continue;
    RepeatedId r;
    std::memcpy(&r, said.data(), sizeof r);
    if (!first || r.again < first->again) first = r;
  }
  return first;
}

}  // namespace nbody::io_detail
