// The domain decomposition under real MPI ranks (ctest runs this binary under
// `mpirun -np P` for P = 1..4): the MPI implementations of exchange() and all_gather()
// (MPI_Alltoallv, MPI_Allgatherv) and the direct-sum ring through them, against one
// process's results that every rank computes for itself. Every rank runs every test; a
// failure on any rank fails mpirun.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "nbody/distributed.hpp"
#include "nbody/gravity.hpp"
#include "nbody/initial_conditions.hpp"
#include "parallel/direct_ring.hpp"

namespace nbody {
namespace {

std::shared_ptr<ForceReducer> g_comm;

using Bytes = ForceReducer::Bytes;

Bytes text(const std::string& s) {
  return Bytes(s.begin(), s.end());
}

TEST(MpiExchange, EveryRankGetsWhatWasAddressedToIt) {
  ForceReducer& c = *g_comm;
  const int parts = c.parts(), me = c.part();
  std::vector<Bytes> send(static_cast<std::size_t>(parts));
  for (int to = 0; to < parts; ++to)
    if (to != (me + 1) % parts || parts == 1)  // one empty message each
      send[std::size_t(to)] = text(std::to_string(me) + ">" + std::to_string(to));
  const auto got = c.exchange(send);
  ASSERT_EQ(got.size(), std::size_t(parts));
  for (int from = 0; from < parts; ++from) {
    const bool empty = parts > 1 && me == (from + 1) % parts;
    EXPECT_EQ(got[std::size_t(from)],
              empty ? Bytes{} : text(std::to_string(from) + ">" + std::to_string(me)));
  }
  const auto all = c.all_gather(text(std::string(std::size_t(me), 'x')));
  ASSERT_EQ(all.size(), std::size_t(parts));
  for (int p = 0; p < parts; ++p)
    EXPECT_EQ(all[std::size_t(p)], text(std::string(std::size_t(p), 'x')));
}

TEST(MpiDirectRing, MatchesOneProcess) {
  ForceReducer& c = *g_comm;
  ModelOptions m;
  m.model = "plummer";
  m.n = 777;
  m.seed = 3;
  const ParticleSystem all = generate(m);
  GravityOptions o;
  o.precision = Precision::Double;
  o.softening = 0.01;
  ParticleSystem one = all;
  make_gravity_solver(o)->compute_forces(one, true);
  ParticleSystem mine;
  for (std::size_t i = std::size_t(c.part()); i < all.size(); i += std::size_t(c.parts()))
    mine.add(all.body(i));
  parallel::make_direct_ring(Precision::Double, o.G, o.softening, 1)->compute_forces(mine, true, c);
  for (std::size_t k = 0; k < mine.size(); ++k) {
    const std::size_t i = std::size_t(c.part()) + k * std::size_t(c.parts());
    EXPECT_NEAR(mine.ax[k], one.ax[i], 1e-12 * std::hypot(one.ax[i], one.ay[i], one.az[i]));
    EXPECT_NEAR(mine.potential[k], one.potential[i], 1e-12 * std::abs(one.potential[i]));
  }
}

}  // namespace
}  // namespace nbody

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  nbody::g_comm = nbody::init_distributed(&argc, &argv);
  if (nbody::g_comm->part() != 0) {  // one rank reports; the others say only what failed
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  const int rc = RUN_ALL_TESTS();
  nbody::g_comm.reset();
  nbody::finalize_distributed();
  return rc;
}
