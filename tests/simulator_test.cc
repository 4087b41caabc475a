// Every algorithm in the registry, simulated for N = 1..64 and many counts, in and out of place:
// each output element must be exactly what the collective defines (see src/exec/simulator.h).
#include <gtest/gtest.h>

#include "exec/simulator.h"

namespace tccl {
namespace {

std::vector<int> Ranks() {
  std::vector<int> n;
  for (int i = 1; i <= 64; ++i) n.push_back(i);
  return n;
}

TEST(Simulator, EveryAlgorithmEveryRankCount) {
  const size_t counts[] = {0, 1, 2, 3, 7, 13, 64, 97, 1000};
  const size_t slices[] = {1, 5, 64, 1 << 15};
  for (const AlgorithmInfo& alg : AllAlgorithms()) {
    for (int n : Ranks()) {
      for (size_t count : counts) {
        // Large rank counts with fine slices multiply quickly; keep the sweep fast.
        if (n > 16 && count > 97) continue;
        for (size_t slice : slices) {
          if (n > 16 && slice < 64) continue;
          if (slice == 1 && count > 97) continue;  // 1000 one-element slices add time, not coverage
          for (bool inPlace : {false, true}) {
            for (tcclRedOp_t op : {tcclSum, tcclAvg}) {
              CollArgs a;
              a.nranks = n;
              a.count = count;
              a.sliceElems = slice;
              a.inPlace = inPlace;
              a.op = op;
              a.root = n > 1 ? (int)(count % n) : 0;
              SimResult r = Simulate(alg, a);
              ASSERT_TRUE(r.ok) << alg.name << " " << CollName(alg.coll) << " N=" << n << " count=" << count
                                << " slice=" << slice << (inPlace ? " in-place" : "") << ": " << r.error;
            }
          }
        }
      }
    }
  }
}

// The simulator itself must catch broken schedules; otherwise the test above proves nothing.
Schedule DropsLastStep(const CollArgs& a) {
  Schedule s = AllAlgorithms()[1].generate(a);  // ring all-reduce
  if (!s.steps.empty()) s.steps.pop_back();
  return s;
}
Schedule SendsTwice(const CollArgs& a) {
  Schedule s = AllAlgorithms()[1].generate(a);
  if (!s.steps.empty()) s.steps.push_back(s.steps.front());
  return s;
}

TEST(Simulator, DetectsBrokenSchedules) {
  CollArgs a;
  a.nranks = 4;
  a.count = 16;
  a.sliceElems = 4;
  for (Generator g : {&DropsLastStep, &SendsTwice}) {
    AlgorithmInfo broken{"broken", CollKind::AllReduce, g, false, ""};
    SimResult r = Simulate(broken, a);
    EXPECT_FALSE(r.ok);
  }
}

}  // namespace
}  // namespace tccl
