// The cost model's counts (src/tuning/cost_model.cc), checked by hand on a few algorithms.
#include <gtest/gtest.h>

#include "algorithms/registry.h"
#include "algorithms/schedule.h"
#include "tests/support/algorithm_named.h"
#include "tuning/cost_model.h"

namespace tccl {
namespace {

using tccl_test::AlgorithmNamed;

// The cost model reads its counts off the schedules (src/tuning/cost_model.cc); check them on
// algorithms whose costs are known by hand.
TEST(CostModel, CountsWhatTheSchedulesDo) {
  auto cost = [](const char* name, CollKind k, int n, size_t count) {
    const AlgorithmInfo* alg = AlgorithmNamed(k, name);
    if (!alg) {
      ADD_FAILURE() << name;
      return AlgoCost{};
    }
    CollArgs a;
    a.kind = k;
    a.nranks = n;
    a.count = count;
    a.elemSize = 4;
    return ScheduleCost(*alg, a);
  };
  const double b = 4096 * 4;
  for (int n = 2; n <= 8; ++n) {
    // direct all-reduce: one round; N-1 copies out and N-1 in; an N-input tree reduce. At 2 ranks
    // the receive reduces straight out of the channel (no copy in).
    AlgoCost d = cost("direct", CollKind::AllReduce, n, 4096);
    EXPECT_EQ(d.rounds, 1) << n;
    EXPECT_DOUBLE_EQ(d.copyBytes, (n == 2 ? 1.0 : 2.0 * (n - 1)) * b) << n;
    EXPECT_DOUBLE_EQ(d.reduceBytes, (n - 1) * b) << n;
    // ring all-gather: N-1 rounds, each sends and receives one block; out of place the own block
    // is copied locally too.
    AlgoCost g = cost("ring", CollKind::AllGather, n, 4096);
    EXPECT_EQ(g.rounds, n - 1) << n;
    EXPECT_DOUBLE_EQ(g.copyBytes, 2.0 * (n - 1) * b + b) << n;
    EXPECT_EQ(g.reduceBytes, 0) << n;
    // binomial broadcast: the root sends to ceil(log2 N) children; the deepest rank is floor(log2 N)
    // hand-overs from the root (relative rank v has popcount(v) ancestors).
    AlgoCost t = cost("tree", CollKind::Broadcast, n, 4096);
    int levels = 0, depth = 0;
    while ((1 << levels) < n) ++levels;
    while ((2 << depth) <= n) ++depth;
    EXPECT_EQ(t.rounds, depth) << n;
    EXPECT_DOUBLE_EQ(t.copyBytes, levels * b + b) << n;  // + the root's local copy (out of place)
    // recursive doubling at powers of two: log2 N exchanges of the whole buffer, each reduced.
    if ((n & (n - 1)) == 0) {
      AlgoCost r = cost("rdouble", CollKind::AllReduce, n, 4096);
      EXPECT_EQ(r.rounds, levels) << n;
      EXPECT_DOUBLE_EQ(r.copyBytes, 2.0 * levels * b + b) << n;  // + the input copied into place
      EXPECT_DOUBLE_EQ(r.reduceBytes, levels * b) << n;
    }
  }
}

// Ranks sharing cores as the scheduler shares them: alike, their total over the cores; uneven,
// the busiest finishes alone on a core once the others leave theirs.
TEST(CostModel, SharedCoresMakespan) {
  EXPECT_DOUBLE_EQ(SharedCoresMakespan({1, 1, 1, 1}, 2), 2);
  EXPECT_DOUBLE_EQ(SharedCoresMakespan({3, 1, 0, 0}, 2), 3);  // two busy ranks, a core each
  // Five ranks on two cores at 0.4 core each until the four light ones finish (t = 2.5); the last
  // has 3 left, alone on a core: 5.5, against 4 for the total over the cores and 10 for ranks per
  // core x the busiest.
  EXPECT_DOUBLE_EQ(SharedCoresMakespan({1, 1, 4, 1, 1}, 2), 5.5);
  EXPECT_DOUBLE_EQ(SharedCoresMakespan({2, 2}, 4), 2);  // no rank runs faster than one core
  EXPECT_DOUBLE_EQ(SharedCoresMakespan({}, 2), 0);
}

}  // namespace
}  // namespace tccl
