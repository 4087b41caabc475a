// Every algorithm in the registry, simulated for N = 1..64 and many counts, in and out of place:
// each output element must be exactly what the collective defines (see src/exec/simulator.h).
#include <gtest/gtest.h>

#include "algorithms/generators.h"
#include "exec/simulator.h"

#include <algorithm>
#include <atomic>

#include "algorithms/registry.h"
#include "tests/support/parallel_for.h"
#include "tests/support/sim_args.h"
#include "tests/support/sweep.h"

namespace tccl {
namespace {

std::vector<int> RankRange(int lo, int hi) {
  std::vector<int> n;
  for (int i = lo; i <= hi; ++i) n.push_back(i);
  return n;
}

// Under TCCL_TEST_SWEEP=quick (the ASan build in .ci/run, where these sweeps took 384 of the unit
// tests' 427 s on a Zen 5 VM) a rank list keeps N <= 9 (every shape below 8 and 8's neighbour) and
// 16, 17, 32, 33 (a power of two and its successor, twice); the cost grows with N squared, so the
// ranks above 33 were most of the time. The uninstrumented run keeps the whole list.
std::vector<int> Thinned(std::vector<int> ranks) {
  if (!tccl_test::QuickSweep()) return ranks;
  std::vector<int> kept;
  for (int n : ranks)
    if (n <= 9 || n == 16 || n == 17 || n == 32 || n == 33) kept.push_back(n);
  return kept;
}

// Every N up to 16, then powers of two and their neighbours up to 64 (all 64 took two minutes
// once the table had fifteen algorithms; these keep every shape of tree and ring).
std::vector<int> Ranks() {
  std::vector<int> n = RankRange(1, 16);
  for (int i : {17, 24, 31, 32, 33, 48, 63, 64}) n.push_back(i);
  return Thinned(n);
}

// Every (algorithm, rank count) pair of a sweep, in an order ParallelFor can hand out: the
// simulator is pure computation, so the pairs run on all cores.
struct AlgRanks {
  const AlgorithmInfo* alg;
  int n;
};
std::vector<AlgRanks> Pairs(const std::vector<int>& ranks, bool (*keep)(const AlgorithmInfo&) = nullptr) {
  std::vector<AlgRanks> pairs;
  for (const AlgorithmInfo& alg : AllAlgorithms())
    if (!keep || keep(alg))
      for (int n : ranks) pairs.push_back({&alg, n});
  return pairs;
}

using tccl_test::SimArgs;
using tccl_test::What;

TEST(Simulator, EveryAlgorithmEveryRankCount) {
  const size_t counts[] = {0, 1, 2, 3, 7, 13, 64, 97, 1000};
  const size_t slices[] = {1, 5, 64, 1 << 15};
  const std::vector<AlgRanks> pairs = Pairs(Ranks());
  ParallelFor(pairs.size(), [&](size_t i) {
    const AlgorithmInfo& alg = *pairs[i].alg;
    const int n = pairs[i].n;
    for (size_t count : counts) {
      // Large rank counts with fine slices multiply quickly; keep the sweep fast.
      if (n > 16 && count > 97) continue;
      for (size_t slice : slices) {
        if (n > 16 && slice < 64) continue;
        if (slice == 1 && count > 97) continue;  // 1000 one-element slices add time, not coverage
        for (bool inPlace : {false, true}) {
          for (tcclRedOp_t op : {tcclSum, tcclAvg}) {
            CollArgs a = SimArgs(n, count, slice, inPlace, op);
            SimResult r = Simulate(alg, a);
            ASSERT_TRUE(r.ok) << What(alg, a) << ": " << r.error;
          }
        }
      }
    }
  });
}

// Single-copy messages (transports/shm/single_copy.h) complete only when the receiver has read
// them, so no algorithm may rely on a send finishing before its receiver gets to it. Run every
// algorithm with every send waiting for its receiver: a deadlock here would be a hang there.
TEST(Simulator, EveryAlgorithmWithSendsThatWaitForTheReceiver) {
  const std::vector<AlgRanks> pairs = Pairs(Ranks());
  ParallelFor(pairs.size(), [&](size_t i) {
    const AlgorithmInfo& alg = *pairs[i].alg;
    const int n = pairs[i].n;
    if (n > 33) return;
    for (size_t count : {0, 1, 7, 97, 1000}) {
      for (size_t slice : {5, 64, 1 << 15}) {
        if (n > 16 && (slice < 64 || count > 97)) continue;
        for (bool inPlace : {false, true}) {
          CollArgs a = SimArgs(n, count, slice, inPlace);
          SimResult r = Simulate(alg, a, /*sendsWaitForReceiver=*/true);
          ASSERT_TRUE(r.ok) << What(alg, a) << ": " << r.error;
        }
      }
    }
  });
}

// The 2-rank two-shot sends each reduced slice in the step that reduces it and takes the peer's in
// the next (TwoShotAllReduce): that relies on a channel holding five slices (CollArgs::
// bufferedBytes), and only where it is told so. With channels holding exactly that it completes,
// in and out of place and with the ranks mixing the two; told so over channels that hold less than
// a slice, it deadlocks (the buffering is needed; five slices are what can be in flight, so that a
// send never waits, not the least that works). Told a byte less, or that
// slices are read in one copy (bufferedBelow), or with avg, or where the buffers fit the cache,
// it does not use that layout.
TEST(Simulator, TheTwoRankTwoShotReliesOnlyOnTheBufferingItIsTold) {
  const AlgorithmInfo* twoshot = nullptr;
  for (const AlgorithmInfo& alg : AllAlgorithms())
    if (alg.coll == CollKind::AllReduce && std::string(alg.name) == "twoshot") twoshot = &alg;
  ASSERT_NE(twoshot, nullptr);
  // Whether rank 0's schedule has a send that waits for a receive of its step (the forward layout).
  auto forwards = [&](CollArgs a) {
    a.kind = CollKind::AllReduce;
    a.rank = 0;
    for (const Step& st : twoshot->generate(a).steps)
      for (const Op& op : st.ops)
        if (op.kind == OpKind::Send && op.after >= 0) return true;
    return false;
  };
  const size_t slice = 4096;  // 16 KiB of float: above what travels with its tag
  for (size_t count : {2 * slice, 6 * slice + 1, 20 * slice + 7}) {
    // The generator's slice: the larger half in equal slices of at most `slice`.
    const size_t half = (count + 1) / 2, k = (half + slice - 1) / slice, slot = (half + k - 1) / k;
    const size_t five = 5 * (slot * 4 + 64);
    for (bool inPlace : {false, true}) {
      CollArgs a = SimArgs(2, count, slice, inPlace);
      a.bufferedBytes = five;
      a.buffersOutgrowCache = true;
      EXPECT_TRUE(forwards(a)) << What(*twoshot, a);
      SimResult r = Simulate(*twoshot, a);
      EXPECT_TRUE(r.ok) << What(*twoshot, a) << ": " << r.error;
      r = Simulate(*twoshot, a, false, {true, false});
      EXPECT_TRUE(r.ok) << What(*twoshot, a) << " rank 0 in place: " << r.error;
      r = Simulate(*twoshot, a, false, {}, slot * 2);
      EXPECT_FALSE(r.ok) << What(*twoshot, a) << " over channels of half a slice";
      EXPECT_NE(r.error.find("deadlock"), std::string::npos) << r.error;
      for (int variant = 0; variant < 4; ++variant) {
        CollArgs b = a;
        if (variant == 0) b.bufferedBytes = five - 1;
        if (variant == 1) b.bufferedBelow = slot * 4;
        if (variant == 2) b.op = tcclAvg;
        if (variant == 3) b.buffersOutgrowCache = false;
        EXPECT_FALSE(forwards(b)) << What(*twoshot, b) << " variant " << variant;
        r = Simulate(*twoshot, b, /*sendsWaitForReceiver=*/true);
        EXPECT_TRUE(r.ok) << What(*twoshot, b) << " variant " << variant << ": " << r.error;
      }
    }
  }
}

// Whether a call is in place is each rank's own choice (its pointers, as in NCCL; the tag does
// not carry it), so the ranks of one call may mix both: every algorithm must then still match its
// messages, finish, and produce the right output, with buffered sends and with sends that wait.
TEST(Simulator, EveryAlgorithmWithRanksMixingInPlaceAndOutOfPlace) {
  const std::vector<AlgRanks> pairs = Pairs(Thinned(RankRange(2, 12)));
  ParallelFor(pairs.size(), [&](size_t i) {
    const AlgorithmInfo& alg = *pairs[i].alg;
    const int n = pairs[i].n;
    std::vector<std::vector<bool>> mixes(3, std::vector<bool>(n, false));
    for (int r = 0; r < n; ++r) {
      mixes[0][r] = r % 2 == 0;  // every other rank
      mixes[1][r] = r == 0;      // one rank
      mixes[2][r] = r != n - 1;  // all but one
    }
    for (size_t count : {1, 7, 97, 1000}) {
      for (size_t slice : {5, 64, 1 << 15}) {
        for (const std::vector<bool>& mix : mixes) {
          for (bool sendsWait : {false, true}) {
            CollArgs a = SimArgs(n, count, slice, false);
            SimResult r = Simulate(alg, a, sendsWait, mix);
            std::string who;
            for (int q = 0; q < n; ++q) who += mix[q] ? 'I' : 'o';
            ASSERT_TRUE(r.ok) << What(alg, a) << " in place per rank " << who
                              << (sendsWait ? ", sends wait" : "") << ": " << r.error;
          }
        }
      }
    }
  });
}

// A schedule that works only because sends are buffered: every rank sends to its successor in one
// step and receives from its predecessor in the next. Fine with mailboxes, a deadlock when sends
// wait for their receiver, and the simulator must say so.
Schedule SendThenReceive(const CollArgs& a) {
  Schedule s;
  const int N = a.nranks, r = a.rank;
  s.steps.push_back({{MakeSend((r + 1) % N, {kSendBuf, 0}, a.count)}});
  s.steps.push_back({{MakeRecv((r + N - 1) % N, {kRecvBuf, 0}, a.count)}});
  return s;
}

TEST(Simulator, DetectsSchedulesThatNeedBufferedSends) {
  AlgorithmInfo shift{"shift", CollKind::Broadcast, &SendThenReceive, true, ""};
  CollArgs a;
  a.nranks = 3;
  a.count = 4;
  SimResult buffered = Simulate(shift, a);
  EXPECT_TRUE(buffered.ok || buffered.error.find("deadlock") == std::string::npos) << buffered.error;
  SimResult waiting = Simulate(shift, a, /*sendsWaitForReceiver=*/true);
  EXPECT_FALSE(waiting.ok);
  EXPECT_NE(waiting.error.find("deadlock"), std::string::npos) << waiting.error;
}

// Receives from one peer take its messages in the order listed, as in the executor, even when the
// first of them waits (`after`) for another op. Broadcast of 2 elements on 3 ranks: rank 1 lists
// [from 2 (sent only in 2's second step), from 0 element 0 after that, from 0 element 1]; if the
// last receive could overtake, it would take element 0.
Schedule OrderedReceivesBehindAWait(const CollArgs& a) {
  Schedule s;
  if (a.rank == 0) {
    s.steps.push_back({{MakeSend(1, {kRecvBuf, 0}, 1), MakeSend(1, {kRecvBuf, 1}, 1), MakeSend(2, {kRecvBuf, 0}, 2)}});
  } else if (a.rank == 2) {
    s.steps.push_back({{MakeRecv(0, {kRecvBuf, 0}, 2)}});
    s.steps.push_back({{MakeSend(1, {kRecvBuf, 0}, 1)}});
  } else {
    s.scratchElems = 1;
    Op second = MakeRecv(0, {kRecvBuf, 0}, 1);
    second.after = 0;
    s.steps.push_back({{MakeRecv(2, {kScratchBuf, 0}, 1), second, MakeRecv(0, {kRecvBuf, 1}, 1)}});
  }
  return s;
}

// A chain broadcast in one step: each rank receives and sends on what it received, the send
// waiting for the receive (Op::after). `waitOnSend`: the forward names the rank's other send
// instead, which writes nothing.
Schedule ForwardInTheSameStep(const CollArgs& a, bool waitOnSend) {
  Schedule s;
  if (a.rank == 0) {
    s.steps.push_back({{MakeSend(1, {kRecvBuf, 0}, a.count)}});
  } else {
    Op forward = MakeSend((a.rank + 1) % a.nranks, {kRecvBuf, 0}, a.count);
    forward.after = waitOnSend ? 1 : 0;
    Step st{{MakeRecv(a.rank - 1, {kRecvBuf, 0}, a.count), MakeSend(a.rank - 1, {kSendBuf, 0}, 0)}};
    if (a.rank + 1 < a.nranks) st.ops.push_back(forward);
    s.steps.push_back(st);
  }
  return s;
}
Schedule ForwardsInTheSameStep(const CollArgs& a) { return ForwardInTheSameStep(a, false); }
Schedule ForwardsAfterASend(const CollArgs& a) { return ForwardInTheSameStep(a, true); }

// The hand-written broadcast schedules above: 2 elements on 3 ranks, root 0, in place.
CollArgs SmallBroadcast() {
  CollArgs a;
  a.kind = CollKind::Broadcast;
  a.nranks = 3;
  a.count = 2;
  a.inPlace = true;
  return a;
}

// A send that waits for a receive of its step sends what the receive wrote (the executor reads
// its data only then), in every mode of sending; a send can only wait for a receive.
TEST(Simulator, ASendThatWaitsForAReceiveOfItsStepSendsWhatItWrote) {
  AlgorithmInfo alg{"forward", CollKind::Broadcast, &ForwardsInTheSameStep, true, ""};
  for (bool sendsWait : {false, true}) {
    SimResult r = Simulate(alg, SmallBroadcast(), sendsWait);
    EXPECT_TRUE(r.ok) << r.error;
  }
  AlgorithmInfo bad{"forward-after-send", CollKind::Broadcast, &ForwardsAfterASend, true, ""};
  SimResult r = Simulate(bad, SmallBroadcast());
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("which is not a receive"), std::string::npos) << r.error;
}

TEST(Simulator, ReceivesFromOnePeerInTheOrderListed) {
  AlgorithmInfo alg{"ordered", CollKind::Broadcast, &OrderedReceivesBehindAWait, true, ""};
  SimResult r = Simulate(alg, SmallBroadcast());
  EXPECT_TRUE(r.ok) << r.error;
}

// Larger 2-rank direct all-reduces go in pieces of 1 MiB, one step each; in place, each
// piece is received into one of two scratch slots and reduced into place in the next step, after
// its send has completed. Two broken forms the simulator must refuse: one slot for every piece
// (piece j-1's reduction reads the slot that piece j's receive writes) and the reduction in the
// piece's own step (it reads the slot being received, and writes what the send reads).
Schedule TwoRankPiecesThroughSlots(const CollArgs& a, size_t piece, size_t slots, size_t lag) {
  Schedule s;
  const int peer = 1 - a.rank;
  const size_t K = SliceCount(a.count, piece), slot = (a.count + K - 1) / K;
  s.scratchElems = slots * slot;
  for (size_t j = 0; j < K + lag; ++j) {
    Step step;
    if (j < K) {
      const size_t b = PartStart(a.count, K, j), n = PartStart(a.count, K, j + 1) - b;
      step.ops.push_back(MakeSend(peer, {kSendBuf, b}, n));
      step.ops.push_back(MakeRecv(peer, {kScratchBuf, (j % slots) * slot}, n));
    }
    if (j >= lag) {
      const size_t i = j - lag, b = PartStart(a.count, K, i), n = PartStart(a.count, K, i + 1) - b;
      step.ops.push_back(MakeReduce({kRecvBuf, b}, {kRecvBuf, b}, {kScratchBuf, (i % slots) * slot}, n));
    }
    s.steps.push_back(step);
  }
  return s;
}
constexpr size_t kTestPiece = (1 << 20) / 4;  // floats, with the ring's slice 1 << 15 below
Schedule TwoSlotsOneStepLate(const CollArgs& a) { return TwoRankPiecesThroughSlots(a, kTestPiece, 2, 1); }
Schedule OneSlotForEveryPiece(const CollArgs& a) { return TwoRankPiecesThroughSlots(a, kTestPiece, 1, 1); }
Schedule ReducedInTheReceivingStep(const CollArgs& a) { return TwoRankPiecesThroughSlots(a, kTestPiece, 2, 0); }

// The 2-rank direct all-reduce reduces as the peer's message arrives, into the buffer it sends from
// when in place, which only a staged send (kStagedSendBytes) allows; a larger in-place one goes
// through two scratch slots (above). Both sides of the boundary, and a fused in-place form with a
// send that is not staged, which the simulator must refuse (the send would read what the
// reduction writes).
Schedule FusedInPlaceWhateverTheSize(const CollArgs& a) {
  Schedule s;
  s.steps.push_back({{MakeSend(1 - a.rank, {kSendBuf, 0}, a.count),
                      MakeRecvReduce(1 - a.rank, {kRecvBuf, 0}, {kSendBuf, 0}, a.count)}});
  return s;
}

TEST(Simulator, TwoRankDirectAllReduceFusesOnlyStagedSendsInPlace) {
  const AlgorithmInfo* direct = nullptr;
  for (const AlgorithmInfo& alg : AllAlgorithms())
    if (alg.coll == CollKind::AllReduce && std::string(alg.name) == "direct") direct = &alg;
  ASSERT_NE(direct, nullptr);
  const size_t staged = kStagedSendBytes / 4;
  // The staged boundary in one piece; then the pieces (TwoRankPiecesThroughSlots above).
  for (size_t count : {staged, staged + 1, kTestPiece, kTestPiece + 1, 3 * kTestPiece + 5})
    for (bool inPlace : {false, true})
      for (tcclRedOp_t op : {tcclSum, tcclAvg}) {
        CollArgs a = SimArgs(2, count, 1 << 15, inPlace, op);
        a.elemSize = 4;
        SimResult r = Simulate(*direct, a);
        ASSERT_TRUE(r.ok) << What(*direct, a) << ": " << r.error;
        a.rank = 1;
        const Schedule s = direct->generate(a);
        const size_t K = SliceCount(count, kTestPiece), slot = (count + K - 1) / K;
        const bool viaSlots = inPlace && count != staged;
        EXPECT_EQ(s.scratchElems, viaSlots ? std::min<size_t>(K, 2) * slot : 0u) << What(*direct, a);
        EXPECT_EQ(s.steps.size(), K + viaSlots + (op == tcclAvg)) << What(*direct, a);
      }
  AlgorithmInfo unsafe{"fused-in-place", CollKind::AllReduce, &FusedInPlaceWhateverTheSize, true, ""};
  CollArgs a = SimArgs(2, staged, 1 << 15, true);
  EXPECT_TRUE(Simulate(unsafe, a).ok);
  a.count = staged + 1;
  SimResult r = Simulate(unsafe, a);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("writes memory that op"), std::string::npos) << r.error;
}

TEST(Simulator, TwoRankPiecesNeedTwoSlotsAndAStepOfLag) {
  AlgorithmInfo safe{"two-slots", CollKind::AllReduce, &TwoSlotsOneStepLate, true, ""};
  CollArgs b = SimArgs(2, 3 * kTestPiece + 5, 1 << 15, true);
  b.elemSize = 4;
  SimResult ok = Simulate(safe, b);
  EXPECT_TRUE(ok.ok) << ok.error;
  for (auto* broken : {&OneSlotForEveryPiece, &ReducedInTheReceivingStep}) {
    AlgorithmInfo unsafe{"broken-slots", CollKind::AllReduce, broken, true, ""};
    CollArgs a = SimArgs(2, 3 * kTestPiece + 5, 1 << 15, true);
    a.elemSize = 4;
    SimResult r = Simulate(unsafe, a);
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.error.find("writes memory that op"), std::string::npos) << r.error;
  }
}

// The simulator itself must catch broken schedules; otherwise the test above proves nothing.
Schedule DropsLastStep(const CollArgs& a) {
  Schedule s = RingAllReduce(a);
  if (!s.steps.empty()) s.steps.pop_back();
  return s;
}
Schedule SendsTwice(const CollArgs& a) {
  Schedule s = RingAllReduce(a);
  if (!s.steps.empty()) s.steps.push_back(s.steps.front());
  return s;
}
// Rank 0 sends rank 1 one element more than the ring all-reduce, which nobody receives.
Schedule SendsOneMoreFromRankZero(const CollArgs& a) {
  Schedule s = RingAllReduce(a);
  if (a.rank == 0 && a.nranks > 1) s.steps.push_back(Step{{MakeSend(1, {kSendBuf, 0}, 1)}});
  return s;
}

// The tree check is real: ring all-reduce combines every rank exactly once but not in the
// canonical order, so claiming it is canonical must be caught for every N >= 3.
TEST(Simulator, DetectsNonCanonicalOrder) {
  for (int n = 3; n <= 9; ++n) {
    CollArgs a;
    a.nranks = n;
    a.count = 5 * n;
    AlgorithmInfo claimed{"ring-claimed-canonical", CollKind::AllReduce, &RingAllReduce, true, ""};
    SimResult r = Simulate(claimed, a);
    EXPECT_FALSE(r.ok) << "N=" << n;
    EXPECT_NE(r.error.find("tree="), std::string::npos) << r.error;
    AlgorithmInfo honest{"ring", CollKind::AllReduce, &RingAllReduce, false, ""};
    EXPECT_TRUE(Simulate(honest, a).ok) << "N=" << n;
  }
}

// Proof by simulator for the determinism contract: every canonical algorithm produces exactly
// the canonical tree for every element, for N = 1..64, many counts (so the same element sits at
// different offsets of buffers of different lengths) and slice sizes.
TEST(Simulator, CanonicalAlgorithmsProduceTheCanonicalTreeEverywhere) {
  std::atomic<int> checked{0};
  const std::vector<int> ranks = Thinned(RankRange(1, 64));
  const std::vector<AlgRanks> pairs = Pairs(ranks, [](const AlgorithmInfo& alg) {
    return alg.canonicalOrder &&
           (alg.coll == CollKind::AllReduce || alg.coll == CollKind::ReduceScatter || alg.coll == CollKind::Reduce);
  });
  ParallelFor(pairs.size(), [&](size_t i) {
    const AlgorithmInfo& alg = *pairs[i].alg;
    const int n = pairs[i].n;
    for (size_t count : {1, 3, 17, 64, 129}) {
      for (size_t slice : {1, 7, 1 << 15}) {
        if (n > 24 && slice == 1) continue;
        CollArgs a;
        a.nranks = n;
        a.count = count;
        a.sliceElems = slice;
        a.root = (int)(count % n);
        a.inPlace = count % 2 == 1;
        SimResult r = Simulate(alg, a);
        ASSERT_TRUE(r.ok) << alg.name << " " << CollName(alg.coll) << " N=" << n << " count=" << count
                          << " slice=" << slice << ": " << r.error;
        ++checked;
      }
    }
  });
  // Each pair checks 15 cases (10 above 24 ranks); more pairs than rank counts: more than one
  // canonical algorithm was found.
  EXPECT_GT(pairs.size(), ranks.size());
  EXPECT_GE(checked.load(), 10 * (int)pairs.size());
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
  // A message nobody receives is named, with its ends.
  AlgorithmInfo extra{"extra send", CollKind::AllReduce, &SendsOneMoreFromRankZero, false, ""};
  SimResult r = Simulate(extra, a);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("1 elements sent from rank 0 to rank 1 were never received"), std::string::npos) << r.error;
}

}  // namespace
}  // namespace tccl
