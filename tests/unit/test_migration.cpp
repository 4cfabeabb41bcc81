// Bodies moving to their owners (parallel::migrate) on P = 1..4 thread ranks: every body ends
// on the rank that owns its key with its whole record, none lost or doubled, in the
// documented order; steps of drifting bodies keep the census; a malformed buffer is an
// Error.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "domain_test_helpers.hpp"
#include "nbody/error.hpp"
#include "thread_ranks.hpp"

namespace nbody {
namespace {

using parallel::DomainCuts;
using testing::first_rank;

struct Rank {
  ParticleSystem before, after;
  std::vector<std::uint64_t> keys_before, keys;
  std::vector<double> cost;
  DomainCuts cuts;
  parallel::MigrationStats stats;
  parallel::Census census_before, census_after;
};

Rank balance_and_migrate(const ParticleSystem& all, int dim, int parts, ForceReducer& r) {
  Rank me;
  me.before = testing::subset(all, [&](std::size_t i) { return first_rank(i, parts) == r.part(); });
  me.after = me.before;
  me.keys = parallel::domain_keys(me.after, dim, parallel::global_cube(me.after, dim, r, 1), 1);
  me.keys_before = me.keys;
  for (std::size_t i = 0; i < me.after.size(); ++i)
    me.cost.push_back(testing::core_cost(me.after, i));
  me.cuts = parallel::balance(me.keys, me.cost, dim, r);
  me.census_before = parallel::census(me.after, r);
  me.stats = parallel::migrate(me.after, me.keys, &me.cost, me.cuts, r);
  me.census_after = parallel::census(me.after, r);
  return me;
}

// One body's whole record, to compare before and after.
std::vector<double> record(const ParticleSystem& ps, std::size_t i) {
  return {ps.x[i],  ps.y[i],  ps.z[i],  ps.vx[i],   ps.vy[i],     ps.vz[i],
          ps.ax[i], ps.ay[i], ps.az[i], ps.mass[i], ps.radius[i], ps.potential[i]};
}

TEST(Migration, EveryBodyReachesItsOwnerWithItsWholeRecord) {
  for (const int dim : {2, 3}) {
    const ParticleSystem all = testing::domain_bodies(5000, dim);
    std::map<std::uint64_t, std::vector<double>> original;
    for (std::size_t i = 0; i < all.size(); ++i) original[all.id[i]] = record(all, i);
    for (const int parts : {1, 2, 3, 4}) {
      SCOPED_TRACE(::testing::Message() << dim << "D, " << parts << " ranks");
      const auto ranks = testing::run_parts<Rank>(parts, [&](std::shared_ptr<ForceReducer> r) {
        return balance_and_migrate(all, dim, parts, *r);
      });
      std::map<std::uint64_t, int> seen;
      std::size_t sent = 0, received = 0;
      for (int p = 0; p < parts; ++p) {
        const Rank& me = ranks[std::size_t(p)];
        const ParticleSystem& ps = me.after;
        ASSERT_EQ(me.keys.size(), ps.size());
        ASSERT_EQ(me.cost.size(), ps.size());
        ASSERT_EQ(ps.potential.size(), ps.size());
        EXPECT_TRUE(ps.accelerations_valid());
        EXPECT_TRUE(ps.potentials_valid());
        sent += me.stats.sent, received += me.stats.received;
        // The expected order: the bodies that stay, then each sender's, in rank order.
        std::vector<std::uint64_t> expected;
        std::vector<int> senders = {p};
        for (int q = 0; q < parts; ++q)
          if (q != p) senders.push_back(q);
        for (int q : senders) {
          const Rank& src = ranks[std::size_t(q)];
          for (std::size_t i = 0; i < src.before.size(); ++i)
            if (me.cuts.owner(src.keys_before[i]) == p) expected.push_back(src.before.id[i]);
        }
        EXPECT_EQ(ps.id, expected) << "rank " << p;
        for (std::size_t i = 0; i < ps.size(); ++i) {
          EXPECT_EQ(me.cuts.owner(me.keys[i]), p);
          ++seen[ps.id[i]];
          ASSERT_TRUE(original.count(ps.id[i]));
          EXPECT_EQ(record(ps, i), original[ps.id[i]]) << "id " << ps.id[i];
          EXPECT_EQ(me.cost[i], testing::core_cost(ps, i));
        }
        EXPECT_EQ(me.census_after.count, all.size());
        EXPECT_NO_THROW(parallel::check_census(me.census_before, me.census_after, "test"));
      }
      EXPECT_EQ(seen.size(), all.size());
      for (const auto& [id, times] : seen) EXPECT_EQ(times, 1) << "id " << id;
      EXPECT_EQ(sent, received);
      if (parts > 1) {
        EXPECT_GT(sent, 0u);
      }
    }
  }
}

TEST(Migration, DriftingBodiesStayOwnedStepAfterStep) {
  for (const int dim : {2, 3}) {
    for (const int parts : {2, 3, 4}) {
      SCOPED_TRACE(::testing::Message() << dim << "D, " << parts << " ranks");
      const ParticleSystem all = testing::domain_bodies(3000, dim, 11);
      const auto recuts = testing::run_parts<int>(parts, [&](std::shared_ptr<ForceReducer> r) {
        ParticleSystem ps =
            testing::subset(all, [&](std::size_t i) { return first_rank(i, parts) == r->part(); });
        const parallel::Census start = parallel::census(ps, *r);
        DomainCuts cuts = parallel::whole_line(parts);
        int balances = 0;
        for (int step = 0; step < 8; ++step) {
          for (std::size_t i = 0; i < ps.size(); ++i) {  // a random kick, seeded by the id
            std::mt19937_64 rng(ps.id[i] * 1000 + std::uint64_t(step));
            std::uniform_real_distribution<double> u(-0.3, 0.3);
            ps.x[i] += u(rng), ps.y[i] += u(rng);
            if (dim == 3) ps.z[i] += u(rng);
          }
          auto keys = parallel::domain_keys(ps, dim, parallel::global_cube(ps, dim, *r, 1), 1);
          std::vector<double> cost(ps.size(), 1.0);
          if (parallel::imbalance(keys, cost, cuts, *r) > 1.2) {
            cuts = parallel::balance(keys, cost, dim, *r);
            ++balances;
          }
          parallel::migrate(ps, keys, &cost, cuts, *r);
          parallel::check_census(start, parallel::census(ps, *r), "after a step's migration");
          for (std::uint64_t k : keys)
            if (cuts.owner(k) != r->part()) throw Error("a body is not on its owner");
          const auto fresh =
              parallel::domain_keys(ps, dim, parallel::global_cube(ps, dim, *r, 1), 1);
          if (fresh != keys) throw Error("the keys did not travel with their bodies");
          if (!(parallel::imbalance(keys, cost, cuts, *r) <= 1.2 || balances == 0))
            throw Error("imbalance above the re-cut threshold after a step");
        }
        return balances;
      });
      EXPECT_GE(recuts[0], 1);  // the first step cuts the whole line
    }
  }
}

// Passes everything through, but damages what exchange() delivers.
class Damaging final : public ForceReducer {
 public:
  Damaging(std::shared_ptr<ForceReducer> inner, int how) : inner_(std::move(inner)), how_(how) {}
  [[nodiscard]] int part() const override { return inner_->part(); }
  [[nodiscard]] int parts() const override { return inner_->parts(); }
  void sum(double* v, std::size_t n) override { inner_->sum(v, n); }
  void sum_device(void* v, std::size_t n, bool d, void* s) override {
    inner_->sum_device(v, n, d, s);
  }
  void gather_device(const void* a, void* b, std::size_t n, bool d, void* s) override {
    inner_->gather_device(a, b, n, d, s);
  }
  [[nodiscard]] int max(int v) override { return inner_->max(v); }
  void exchange_device(const std::vector<const void*>& a, const std::vector<std::size_t>& an,
                       const std::vector<void*>& b, const std::vector<std::size_t>& bn,
                       void* s) override {
    inner_->exchange_device(a, an, b, bn, s);
  }
  [[nodiscard]] std::vector<Bytes> all_gather(const Bytes& b) override {
    return inner_->all_gather(b);
  }
  [[nodiscard]] std::vector<Bytes> exchange(const std::vector<Bytes>& send) override {
    auto got = inner_->exchange(send);
    for (auto& b : got) {
      if (b.empty()) continue;
      if (how_ == 0) b.pop_back();              // truncated
      if (how_ == 1) b.resize(5);               // shorter than a header
      if (how_ == 2) b[0] ^= 0x55;              // not a migration buffer
      if (how_ == 3) b.insert(b.end(), 96, 0);  // a body too many
      if (how_ == 4) b[22] ^= 0x7f;             // a count far beyond the bytes
    }
    return got;
  }

 private:
  std::shared_ptr<ForceReducer> inner_;
  int how_;
};

TEST(Migration, AMalformedBufferIsAnError) {
  const ParticleSystem all = testing::domain_bodies(2000, 3);
  for (int how = 0; how < 5; ++how) {
    const auto thrown = testing::run_parts<std::string>(2, [&](std::shared_ptr<ForceReducer> r) {
      Damaging d(r, how);
      try {
        balance_and_migrate(all, 3, 2, d);
      } catch (const Error& e) {
        return std::string(e.what());
      }
      return std::string();
    });
    for (const auto& what : thrown)
      EXPECT_NE(what.find("malformed buffer"), std::string::npos) << how << ": " << what;
  }
}

TEST(Migration, ARankWithBadInputStopsItsReceiversToo) {
  const auto thrown = testing::run_parts<std::string>(3, [](std::shared_ptr<ForceReducer> r) {
    ParticleSystem ps = testing::domain_bodies(300, 3);
    std::vector<std::uint64_t> keys(ps.size() - (r->part() == 1 ? 1 : 0), 0);
    try {
      parallel::migrate(ps, keys, nullptr, parallel::whole_line(3), *r);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  });
  EXPECT_NE(thrown[1].find("299 keys for 300 bodies"), std::string::npos) << thrown[1];
  EXPECT_NE(thrown[0].find("rank 1 could not send"), std::string::npos) << thrown[0];
  EXPECT_NE(thrown[2].find("rank 1 could not send"), std::string::npos) << thrown[2];
}

TEST(Migration, TheCensusSeesALostOrDoubledBody) {
  const auto c =
      testing::run_parts<std::vector<parallel::Census>>(2, [](std::shared_ptr<ForceReducer> r) {
        ParticleSystem ps = testing::subset(testing::domain_bodies(100, 3),
                                            [&](std::size_t i) { return int(i % 2) == r->part(); });
        std::vector<parallel::Census> out{parallel::census(ps, *r)};
        if (r->part() == 1) ps.remove({0});
        out.push_back(parallel::census(ps, *r));  // one lost
        if (r->part() == 1) ps.id[0] = ps.id[1];
        out.push_back(parallel::census(ps, *r));  // and one doubled
        ps = testing::subset(testing::domain_bodies(100, 3),
                             [&](std::size_t i) { return int(i % 2) == r->part(); });
        if (r->part() == 0) std::swap(ps.id[0], ps.id[1]);  // a swap of ids is no loss
        out.push_back(parallel::census(ps, *r));
        return out;
      });
  EXPECT_EQ(c[0][0].count, 100u);
  EXPECT_NO_THROW(parallel::check_census(c[0][0], c[0][3], "swap"));
  for (int i : {1, 2}) {
    EXPECT_THROW(parallel::check_census(c[0][0], c[0][std::size_t(i)], "step 3"), Error);
    EXPECT_EQ(c[0][std::size_t(i)].id_hash,
              c[1][std::size_t(i)].id_hash);  // the same on every rank
  }
  try {
    parallel::check_census(c[0][0], c[0][1], "step 3");
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("step 3: ownership census changed"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("bodies 100 -> 99"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace nbody
