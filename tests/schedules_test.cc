// What the generators' schedules look like, beyond what the simulator checks of their results:
// where local copies sit, and how the direct algorithms slice (src/algorithms/direct_shot.cc).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "algorithms/generators.h"
#include "algorithms/registry.h"
#include "exec/simulator.h"
#include "tests/support/algorithm_named.h"
#include "tests/support/sim_args.h"

namespace tccl {
namespace {

using tccl_test::AlgorithmNamed;
using tccl_test::SimArgs;
using tccl_test::What;

// Out of place, a broadcast root copies its data to its own output and an all-gather rank copies its
// own block into place. That copy must share a step with a send (the executor runs it after the
// step's messages are posted, so peers work meanwhile), never be a step of its own ahead of them:
// copying the whole message first left the chain idle for that long (docs/performance.md).
TEST(Schedules, OutOfPlaceOwnCopiesShareAStepWithASend) {
  for (const AlgorithmInfo& alg : AllAlgorithms()) {
    if (alg.coll != CollKind::Broadcast && alg.coll != CollKind::AllGather && alg.coll != CollKind::AllToAll) continue;
    for (int n = 2; n <= 8; ++n) {
      for (size_t count : {size_t{1}, size_t{1000}}) {
        CollArgs a = SimArgs(n, count, 64, false);
        a.kind = alg.coll;
        for (a.rank = 0; a.rank < n; ++a.rank) {
          const Schedule s = alg.generate(a);
          for (const Step& step : s.steps) {
            bool copiesToOutput = false, sends = false;
            for (const Op& op : step.ops) {
              copiesToOutput |= op.kind == OpKind::Copy && op.dst.buf == kRecvBuf;
              sends |= op.kind == OpKind::Send;
            }
            EXPECT_TRUE(!copiesToOutput || sends) << What(alg, a) << " rank " << a.rank
                                                 << ": a step copies into the output without sending";
          }
        }
      }
    }
  }
}

// The direct algorithms (a slice to or from each of the N-1 peers per step) cut slices of at most
// min(ring's slice, 2 x ring's slice / (N-1)), so a step sends at most two ring slices at any N
// (DirectSliceElems, src/algorithms/direct_shot.cc; docs/performance.md), and never below a line.
TEST(Schedules, DirectAlgorithmsKeepAStepsSlicesWithinTwiceTheRingsSlice) {
  const size_t slice = 1 << 15;
  const std::pair<CollKind, Generator> direct[] = {{CollKind::AllReduce, &TwoShotAllReduce},
                                                   {CollKind::ReduceScatter, &DirectReduceScatter},
                                                   {CollKind::Reduce, &DirectReduce}};
  for (const auto& [kind, generate] : direct) {
    // Over every rank's schedule: the largest message sent, and the most sent in one step.
    auto largestSends = [&](int n, size_t count, size_t sliceElems) {
      CollArgs a = SimArgs(n, count, sliceElems, false);
      a.kind = kind;
      a.root = 0;
      size_t message = 0, step = 0;
      for (a.rank = 0; a.rank < n; ++a.rank)
        for (const Step& st : generate(a).steps) {
          size_t sent = 0;
          for (const Op& op : st.ops)
            if (op.kind == OpKind::Send) {
              sent += op.count;
              message = std::max(message, op.count);
            }
          step = std::max(step, sent);
        }
      return std::make_pair(message, step);
    };
    for (int n = 2; n <= 8; ++n) {
      const auto [largestMessage, largestStep] = largestSends(n, (size_t)64 * slice, slice);
      const std::string what = std::string(CollName(kind)) + " N=" + std::to_string(n);
      const size_t bound = n <= 3 ? slice : 2 * slice / (n - 1);
      EXPECT_LE(largestMessage, bound) << what;
      EXPECT_GT(largestMessage, bound / 2) << what;  // no smaller than the bound needs
      EXPECT_LE(largestStep, 2 * slice) << what;     // (the 2-rank two-shot: a slice and a gathered one)
    }
    // Never below a cache line: a 64-byte ring slice stays 16 floats at 8 ranks.
    EXPECT_EQ(largestSends(8, 4096, 16).first, 16u) << CollName(kind);
  }
}

// Where peers read the call's buffers in one copy (CollArgs::singleCopyBytes), the same algorithms
// cut slices of at least that size (at most twice it) wherever a chunk holds one of them (the
// two-shot: four), so their messages are read in one copy rather than through the rings; with
// less, the rings' slices. The
// schedules stay correct with every send waiting for its receiver (single copy's rule), in and out
// of place, also where the 2-rank two-shot would otherwise send each reduced slice in the step that
// reduces it (it needs buffering, which single-copy messages do not have: bufferedBelow).
TEST(Schedules, DirectAlgorithmsSendSlicesReadInOneCopyWhereTheBuffersAllowIt) {
  const size_t slice = 64, single = 1000;  // elements; the threshold is single * 4 bytes
  const std::pair<CollKind, const char*> direct[] = {{CollKind::AllReduce, "twoshot"},
                                                     {CollKind::ReduceScatter, "direct"},
                                                     {CollKind::Reduce, "direct"}};
  for (const auto& [kind, name] : direct) {
    const AlgorithmInfo* alg = AlgorithmNamed(kind, name);
    ASSERT_NE(alg, nullptr) << CollName(kind) << " " << name;
    const Generator generate = alg->generate;
    for (int n = 2; n <= 8; ++n)
      for (size_t chunks : {(size_t)1, (size_t)3, (size_t)4, (size_t)7}) {
        // A chunk (the reduce-scatter's count, the reduce's message, 1/N of an all-reduce) of
        // `chunks` thresholds and a bit.
        const size_t chunk = chunks * single + 3 * (size_t)n;
        const size_t count = kind == CollKind::AllReduce ? chunk * (size_t)n : chunk;
        for (bool inPlace : {false, true}) {
          CollArgs a = SimArgs(n, count, slice, inPlace);
          a.kind = kind;
          a.elemSize = 4;
          a.singleCopyBytes = single * 4;
          a.bufferedBytes = (size_t)1 << 30;
          a.bufferedBelow = a.singleCopyBytes;
          a.buffersOutgrowCache = true;
          const std::string what = What(*alg, a);
          size_t smallest = SIZE_MAX, largest = 0;
          for (a.rank = 0; a.rank < n; ++a.rank)
            for (const Step& st : generate(a).steps)
              for (const Op& op : st.ops)
                if (op.kind == OpKind::Send && op.count) {
                  smallest = std::min(smallest, op.count);
                  largest = std::max(largest, op.count);
                }
          // The two-shot takes slices read in one copy only where a chunk holds four of them.
          if (chunks >= 4 || kind != CollKind::AllReduce) {
            EXPECT_GE(smallest, single) << what;
            EXPECT_LE(largest, 2 * single) << what;
          } else {
            EXPECT_LE(largest, slice) << what;
          }
          a.rank = 0;
          SimResult r = Simulate(*alg, a, /*sendsWaitForReceiver=*/true);
          EXPECT_TRUE(r.ok) << what << ": " << r.error;
        }
      }
  }
}

}  // namespace
}  // namespace tccl
