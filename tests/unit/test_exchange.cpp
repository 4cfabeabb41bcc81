// The domain decomposition's traffic (ForceReducer::exchange, all_gather) between the thread
// ranks of the tests: each part gets exactly what the others addressed to it, in part order,
// empty buffers included.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "thread_ranks.hpp"

namespace nbody {
namespace {

using Bytes = ForceReducer::Bytes;

Bytes text(const std::string& s) {
  return Bytes(s.begin(), s.end());
}

TEST(Exchange, EveryPartGetsWhatWasAddressedToIt) {
  for (const int parts : {1, 2, 3, 4}) {
    const auto got =
        testing::run_parts<std::vector<Bytes>>(parts, [parts](std::shared_ptr<ForceReducer> r) {
          std::vector<Bytes> send(static_cast<std::size_t>(parts));
          for (int to = 0; to < parts; ++to)  // nothing from a part to the part after it
            if (to != (r->part() + 1) % parts || parts == 1)
              send[std::size_t(to)] = text(std::to_string(r->part()) + ">" + std::to_string(to));
          return r->exchange(send);
        });
    for (int p = 0; p < parts; ++p) {
      ASSERT_EQ(got[std::size_t(p)].size(), std::size_t(parts));
      for (int from = 0; from < parts; ++from) {
        const bool empty = parts > 1 && p == (from + 1) % parts;
        EXPECT_EQ(got[std::size_t(p)][std::size_t(from)],
                  empty ? Bytes{} : text(std::to_string(from) + ">" + std::to_string(p)))
            << parts << " parts, " << from << " to " << p;
      }
    }
  }
}

TEST(Exchange, AllGatherGivesEveryPartInOrder) {
  const auto got = testing::run_parts<std::vector<Bytes>>(3, [](std::shared_ptr<ForceReducer> r) {
    return r->all_gather(text(std::string(std::size_t(r->part()), 'x')));
  });
  for (const auto& all : got) {
    ASSERT_EQ(all.size(), 3u);
    for (std::size_t p = 0; p < 3; ++p) EXPECT_EQ(all[p], text(std::string(p, 'x')));
  }
}

}  // namespace
}  // namespace nbody
