// Unit tests for the parts under the shared-memory transport and the communicator's fast path:
// the low-latency line ring (transports/shm/ll_ring), the plan cache (src/comm/plan_cache), the
// flight recorder's lock-free writer and the operation lock (src/comm/), the executor's schedule
// preparation (src/exec/executor). The tag checks: op_tag_test.cc.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "algorithms/generators.h"
#include "comm/communicator.h"
#include "comm/flight_recorder.h"
#include "comm/op_lock.h"
#include "comm/plan_cache.h"
#include "exec/executor.h"
#include "transports/shm/ll_ring.h"
#include "transports/shm/ring_copy_in.h"
#include "transports/shm/shm_transport.h"
#include "tests/support/flight_dump.h"

namespace tccl {
namespace {

// Which all-to-alls go by CMA (communicator.h): where the pairs' rings outgrow the last-level
// cache and ranks share cores. The measured points: 2 cores, 32 MiB L3, 1 MiB rings.
TEST(AllToAllByCma, WhereTheRingsOutgrowTheCacheAndRanksShareCores) {
  const size_t MiB = 1 << 20;
  for (size_t ranks : {1, 2, 3, 4, 5, 6}) EXPECT_FALSE(tccl::AllToAllByCma(ranks, true, MiB, 32 * MiB)) << ranks;
  EXPECT_TRUE(tccl::AllToAllByCma(7, true, MiB, 32 * MiB));  // 42 MiB of rings
  EXPECT_TRUE(tccl::AllToAllByCma(8, true, MiB, 32 * MiB));
  EXPECT_FALSE(tccl::AllToAllByCma(8, false, MiB, 32 * MiB));   // a core per rank: not measured
  EXPECT_FALSE(tccl::AllToAllByCma(8, true, MiB, 0));           // cache size unknown
  EXPECT_FALSE(tccl::AllToAllByCma(8, true, MiB / 4, 32 * MiB)); // smaller rings fit
  EXPECT_TRUE(tccl::AllToAllByCma(4, true, 4 * MiB, 32 * MiB));  // larger ones do not
}

// The host's single-copy threshold (shm_transport.h): 128 KiB where the pairs' rings outgrow the
// cache, whatever the cores (both ends frame by it); else TCCL_SHM_SINGLE_COPY_BYTES; never where
// single copy is off.
TEST(HostSingleCopyBytes, AnEighthOfAMebibyteWhereThePairsRingsOutgrowTheCache) {
  const size_t MiB = 1 << 20, KiB = 1 << 10;
  EXPECT_EQ(tccl::HostSingleCopyBytes(256 * KiB, 8, MiB, 32 * MiB), 128 * KiB);
  EXPECT_EQ(tccl::HostSingleCopyBytes(256 * KiB, 7, MiB, 32 * MiB), 128 * KiB);
  EXPECT_EQ(tccl::HostSingleCopyBytes(256 * KiB, 6, MiB, 32 * MiB), 256 * KiB);   // 30 MiB of rings fit
  EXPECT_EQ(tccl::HostSingleCopyBytes(256 * KiB, 8, MiB, 300 * MiB), 256 * KiB);  // a larger cache
  EXPECT_EQ(tccl::HostSingleCopyBytes(64 * KiB, 8, MiB, 32 * MiB), 64 * KiB);     // a lower threshold stays
  EXPECT_EQ(tccl::HostSingleCopyBytes(0, 8, MiB, 32 * MiB), 0u);                  // single copy off
  EXPECT_EQ(tccl::HostSingleCopyBytes(256 * KiB, 8, MiB, 0), 256 * KiB);          // cache size unknown
  EXPECT_EQ(tccl::HostSingleCopyBytes(256 * KiB, 1, MiB, 1), 256 * KiB);          // no pairs
}

// Whether an in-place all-to-all also offers its scratch (communicator.h): where the blocks all
// the host's ranks set aside, one per directed pair, outgrow the cache.
TEST(AllToAllScratchByCma, WhereTheBlocksSetAsideOutgrowTheCache) {
  const size_t MiB = 1 << 20, KiB = 1 << 10;
  EXPECT_FALSE(tccl::AllToAllScratchByCma(8, 512 * KiB, 32 * MiB));  // 28 MiB set aside
  EXPECT_TRUE(tccl::AllToAllScratchByCma(8, 600 * KiB, 32 * MiB));   // 32.8 MiB
  EXPECT_TRUE(tccl::AllToAllScratchByCma(7, 2 * MiB, 32 * MiB));
  EXPECT_FALSE(tccl::AllToAllScratchByCma(1, 64 * MiB, 32 * MiB));   // nothing set aside
  EXPECT_FALSE(tccl::AllToAllScratchByCma(8, 2 * MiB, 0));           // cache size unknown
}

TEST(RingsOutgrowTheCache, CountsEveryRingAgainstAQuarterOfTheCache) {
  const size_t MiB = 1 << 20;
  EXPECT_TRUE(tccl::RingsOutgrowTheCache(56, MiB, 32 * MiB));  // 8 ranks, each sending to 7
  EXPECT_TRUE(tccl::RingsOutgrowTheCache(12, MiB, 32 * MiB));  // 4 ranks, each sending to 3
  EXPECT_FALSE(tccl::RingsOutgrowTheCache(8, MiB, 32 * MiB));
  EXPECT_FALSE(tccl::RingsOutgrowTheCache(7, MiB, 32 * MiB));  // an 8-rank broadcast
  EXPECT_FALSE(tccl::RingsOutgrowTheCache(56, MiB, 0));        // cache unknown
}

// Messages of every size up to the LL limit, many times around the ring, sender and receiver on
// two threads: every byte arrives, in order, and the sender never overwrites an unread line. The
// sender claims its next lines after every message, as the executor has it do, while the receiver
// reads: claiming must not disturb a line in flight.
TEST(LLRing, StreamsMessagesAcrossWrapsBetweenThreads) {
  auto ring = std::make_unique<LLRing>();
  memset(static_cast<void*>(ring.get()), 0, sizeof(LLRing));  // shared memory starts zeroed
  std::mt19937 rng(7);
  std::vector<size_t> sizes;
  for (int i = 0; i < 3000; ++i) sizes.push_back(1 + rng() % kLLMaxBytes);
  auto byteOf = [](size_t msg, size_t i) { return (unsigned char)(msg * 131 + i * 7 + 1); };
  std::thread sender([&] {
    LLSender s;
    std::vector<unsigned char> buf;
    for (size_t m = 0; m < sizes.size(); ++m) {
      buf.resize(sizes[m]);
      for (size_t i = 0; i < buf.size(); ++i) buf[i] = byteOf(m, i);
      for (size_t done = 0; done < buf.size();) done += s.Send(ring.get(), buf.data(), done, buf.size());
      s.ClaimNext(ring.get());
    }
  });
  LLReceiver r;
  size_t bad = 0, returns = 0;
  std::vector<unsigned char> got;
  // The receiver is the slow side (it yields between polls), so the sender runs into a full
  // ring; a sender that overwrote unread lines would leave the receiver stuck or reading garbage.
  const auto giveUp = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (size_t m = 0; m < sizes.size() && std::chrono::steady_clock::now() < giveUp; ++m) {
    got.assign(sizes[m], 0);
    RecvSink sink;
    sink.direct = got.data();
    for (size_t done = 0; done < got.size() && std::chrono::steady_clock::now() < giveUp;) {
      bool returned = false;
      done += r.Recv(ring.get(), sink, done, got.size(), &returned);
      returns += returned;
      std::this_thread::yield();
    }
    for (size_t i = 0; i < got.size(); ++i) bad += got[i] != byteOf(m, i);
  }
  sender.join();
  ASSERT_LT(std::chrono::steady_clock::now(), giveUp) << "the receiver never saw the lines it waited for";
  EXPECT_EQ(bad, 0u);
  EXPECT_GT(returns, 10u);  // the ring wrapped many times, so lines were handed back in batches
}

// Claiming the next lines is a hint to the cache: it writes nothing, counts the lines of the last
// message, and stays inside the lines the receiver has handed back (here: none once the ring is full).
TEST(LLRing, ClaimingTheNextLinesWritesNothing) {
  auto ring = std::make_unique<LLRing>();
  // Lines not yet written hold a pattern, not zeros, so that a stray store of zero shows too.
  memset(static_cast<void*>(ring.get()), 0xa5, sizeof(LLRing));
  ring->consumed.store(0);
  auto before = std::make_unique<LLRing>();
  std::vector<unsigned char> msg(3 * LLLine::kPayload - 1, 0x5a);
  LLSender s;
  bool full = false;
  for (uint64_t m = 0; m < LLRing::kLines && !full; ++m) {
    const size_t done = s.Send(ring.get(), msg.data(), 0, msg.size());
    full = done < msg.size();  // nobody reads in this test, so the ring fills up
    if (!full) {
      EXPECT_EQ(s.messageLines, 3u);
    }
    memcpy(static_cast<void*>(before.get()), ring.get(), sizeof(LLRing));
    s.ClaimNext(ring.get());
    ASSERT_EQ(memcmp(before.get(), ring.get(), sizeof(LLRing)), 0) << "after message " << m;
  }
  EXPECT_TRUE(full);
  EXPECT_EQ(s.next, s.freeUntil);  // claimed at the full ring too: nothing there to claim
}

// A reducing sink is handed whole lines (56 bytes, a multiple of every element size) with their
// offsets in the message.
TEST(LLRing, ConsumerSeesLineSizedFragmentsAtTheirOffsets) {
  auto ring = std::make_unique<LLRing>();
  memset(static_cast<void*>(ring.get()), 0, sizeof(LLRing));
  std::vector<double> in(100);
  for (size_t i = 0; i < in.size(); ++i) in[i] = 0.5 * (double)i;
  LLSender s;
  ASSERT_EQ(s.Send(ring.get(), in.data(), 0, in.size() * 8), in.size() * 8);
  struct Ctx {
    std::vector<double> out = std::vector<double>(100);
    std::vector<size_t> frags;
  } ctx;
  RecvSink sink;
  sink.ctx = &ctx;
  sink.granularity = 8;
  sink.consume = [](void* c, const void* frag, size_t offset, size_t bytes) {
    auto* x = static_cast<Ctx*>(c);
    x->frags.push_back(bytes);
    memcpy(reinterpret_cast<unsigned char*>(x->out.data()) + offset, frag, bytes);
  };
  LLReceiver r;
  bool returned = false;
  ASSERT_EQ(r.Recv(ring.get(), sink, 0, in.size() * 8, &returned), in.size() * 8);
  EXPECT_EQ(ctx.out, in);
  for (size_t f = 0; f + 1 < ctx.frags.size(); ++f) EXPECT_EQ(ctx.frags[f], LLLine::kPayload);
  EXPECT_EQ(ctx.frags.back(), 800 % LLLine::kPayload);
}

// Streamed copies (ring_copy_in.h) deliver exactly what memcpy does, at every alignment of the
// destination and every length around the 16-byte head and the 64-byte body, and touch nothing
// beyond the destination range.
TEST(RingCopyIn, StreamCopyIsMemcpy) {
  std::vector<unsigned char> src(70000 + 64), dst(src.size() + 64);
  std::mt19937 rng(7);
  for (auto& b : src) b = (unsigned char)rng();
  for (size_t dstOff = 0; dstOff < 17; ++dstOff)
    for (size_t srcOff : {(size_t)0, (size_t)3})
      for (size_t n : {0, 1, 15, 16, 17, 63, 64, 65, 127, 200, 4099, 70000}) {
        std::fill(dst.begin(), dst.end(), 0xEE);
        tccl::StreamCopy(dst.data() + dstOff, src.data() + srcOff, n);
        tccl::StreamFence();
        ASSERT_EQ(memcmp(dst.data() + dstOff, src.data() + srcOff, n), 0) << dstOff << " " << n;
        for (size_t i = 0; i < dst.size(); ++i) {
          if (i < dstOff || i >= dstOff + n) {
            ASSERT_EQ(dst[i], 0xEE) << dstOff << " " << n << " at " << i;
          }
        }
      }
}

namespace ringcopy {

using tccl::RingCopyIn;
using tccl::RingReadCost;

// What each end pays per byte (CycleNow ticks), by the way a piece was written.
struct Costs {
  double senderCached, receiverCached, senderStreamed, receiverStreamed;
};
// A 2-rank broadcast root outside the VM's slow spells (docs/performance.md): the cached copy-in
// is the slow stage, and streaming it leaves the receiver's reads from memory the slower end.
constexpr Costs kBroadcastLike{0.2, 0.07, 0.1, 0.15};

struct Pair {
  RingReadCost cost{};  // zeroed, as in a new segment
  RingCopyIn sender;
  explicit Pair(bool mayExplore = true) : sender(&cost, mayExplore) {}

  // `pieces` timed pieces of 128 KiB through the sender's choice, the receiver reading each at
  // once and adding its cost as RecordRingRead would (unless `receiverReports` is false: a
  // receiver whose fragments are never timed). `bothWays`: the same connection also receives a
  // piece for each one it sends. Returns how many went streamed.
  int Drive(const Costs& k, int pieces, bool receiverReports = true, bool bothWays = false) {
    const size_t n = 128 << 10;
    int streamed = 0;
    for (int i = 0; i < pieces; ++i) {
      const bool s = sender.NextPieceStreams();
      streamed += s;
      sender.ObservePiece(n, (uint64_t)((s ? k.senderStreamed : k.senderCached) * n));
      if (bothWays) sender.NoteReceived(n);
      if (!receiverReports) continue;
      cost.cycles[s] += (uint64_t)((s ? k.receiverStreamed : k.receiverCached) * n);
      cost.bytes[s] += n;
    }
    return streamed;
  }
  // Into streaming by the clearly-slow rule (two pieces at twice the line's cost).
  void EnterSlowSpell() {
    sender.SetClearlySlow(0.5);
    Drive({1.0, 0.1, 0.1, 0.2}, RingCopyIn::kClearlySlowInARow);
  }
};

constexpr int kLook = RingCopyIn::kFirstWindow + RingCopyIn::kExplorePieces + 1;  // window, explore, judge

// Outside the VM's slow spells, for a reduce or an all-to-all: the cached copy-in costs about what
// the copy-out does, so streaming could only lose and is never even tried.
TEST(RingCopyIn, NeverStreamsWhileCopyInCostsLikeCopyOut) {
  Pair p;
  EXPECT_EQ(p.Drive({0.15, 0.1, 0.1, 0.3}, 20000), 0);
  EXPECT_FALSE(p.sender.streaming());
  // Small pieces are never timed: however slow, they change nothing.
  for (int i = 0; i < 1000; ++i) p.sender.ObservePiece(tccl::kTimedRingBytes - 1, 1u << 30);
  EXPECT_EQ(p.Drive({0.15, 0.1, 0.1, 0.3}, 1000), 0);
}

// A one-way pipeline whose slow stage is the cached copy-in: streaming, the slower end costs less,
// and the sender keeps it after its first look; when the receiver's reads of streamed pieces get
// dearer than the cached copy-in, a re-try of the cache finds it cheaper and the sender goes back.
TEST(RingCopyIn, StreamsWhereTheSlowerEndThenCostsLessAndGoesBack) {
  Pair p;
  p.Drive(kBroadcastLike, kLook);
  EXPECT_TRUE(p.sender.streaming());
  EXPECT_EQ(p.sender.window(), RingCopyIn::kFirstWindow);
  // Re-tries of the cache lose, and come ever more rarely.
  const int streamed = p.Drive(kBroadcastLike, 4000);
  EXPECT_TRUE(p.sender.streaming());
  EXPECT_EQ(p.sender.window(), RingCopyIn::kMaxWindow);
  EXPECT_GT(streamed, 4000 - 4000 / 20);
  // Within two windows (the first may have begun before the change, its receiver figures mixed).
  p.Drive({0.2, 0.07, 0.1, 0.35}, 2 * (RingCopyIn::kMaxWindow + RingCopyIn::kExplorePieces + 2));
  EXPECT_FALSE(p.sender.streaming());
}

// A cached copy-in slow enough to look, but streaming loses anyway (the receiver's reads from
// memory cost more than the copy-in it saves): explorations come ever more rarely, < 1% of the
// pieces once settled.
TEST(RingCopyIn, ExplorationsThatChangeNothingGrowRarer) {
  Pair p;
  const Costs k{0.3, 0.1, 0.1, 0.5};
  p.Drive(k, 8000);
  EXPECT_FALSE(p.sender.streaming());
  EXPECT_EQ(p.sender.window(), RingCopyIn::kMaxWindow);
  const int pieces = 20 * RingCopyIn::kMaxWindow;
  const int streamed = p.Drive(k, pieces);
  EXPECT_GT(streamed, 0);  // it still looks now and then
  EXPECT_LT(streamed, pieces / 100);
  EXPECT_FALSE(p.sender.streaming());
}

// The measured rule stays out where its figures mispredicted or are missing: a pair streaming both
// ways, ranks sharing cores, a receiver that never reports. Through the cache throughout.
TEST(RingCopyIn, MeasuredRuleOnlyForOneWayStreamsWithACoreEach) {
  {
    Pair p;
    EXPECT_EQ(p.Drive(kBroadcastLike, 5000, true, /*bothWays=*/true), 0);
  }
  {
    Pair p(/*mayExplore=*/false);
    EXPECT_EQ(p.Drive(kBroadcastLike, 5000), 0);
  }
  {
    Pair p;
    EXPECT_EQ(p.Drive(kBroadcastLike, 5000, /*receiverReports=*/false), 0);
  }
}

// The clearly-slow rule, wherever the sender is (here with ranks sharing cores and the pair
// streaming both ways): two pieces in a row below the line stream at once, for
// kWindowAfterClearlySlow pieces; a re-tried cached piece still that slow ends the re-try at once
// and doubles the wait; one that is not ends the streaming.
TEST(RingCopyIn, ClearlySlowPiecesStreamAtOnce) {
  Pair p(/*mayExplore=*/false);
  p.sender.SetClearlySlow(0.5);
  p.Drive({1.0, 0.1, 0.1, 0.2}, 1, true, true);
  EXPECT_FALSE(p.sender.streaming());  // one alone may be a preemption
  p.Drive({0.1, 0.1, 0.1, 0.2}, 1, true, true);
  p.Drive({1.0, 0.1, 0.1, 0.2}, 1, true, true);
  EXPECT_FALSE(p.sender.streaming());
  p.Drive({1.0, 0.1, 0.1, 0.2}, 1, true, true);
  EXPECT_TRUE(p.sender.streaming());
  EXPECT_EQ(p.sender.window(), RingCopyIn::kWindowAfterClearlySlow);
  EXPECT_NE(std::string(p.sender.reason()).find("clearly slow"), std::string::npos);  // for the log
  int window = RingCopyIn::kWindowAfterClearlySlow;
  for (int retry = 0; retry < 6; ++retry) {
    EXPECT_EQ(p.Drive({1.0, 0.1, 0.1, 0.2}, window, true, true), window) << retry;
    EXPECT_FALSE(p.sender.NextPieceStreams());  // the re-try through the cache
    p.Drive({1.0, 0.1, 0.1, 0.2}, 1, true, true);
    EXPECT_TRUE(p.sender.streaming());
    window = std::min(2 * window, RingCopyIn::kMaxWindow);
    EXPECT_EQ(p.sender.window(), window);
  }
  p.Drive({0.1, 0.1, 0.1, 0.2}, window, true, true);
  p.Drive({0.1, 0.1, 0.1, 0.2}, 1, true, true);  // a re-try that is not slow
  EXPECT_FALSE(p.sender.streaming());
  EXPECT_EQ(p.Drive({0.1, 0.1, 0.1, 0.2}, 5000, true, true), 0);
}

// Cached pieces that straddle the clearly-slow line for want of memory bandwidth, not for the
// VM's store penalty (a 64 MiB broadcast root at 4 and 8 ranks on 16 cores, 2026-11-25): the
// clearly-slow rule streams, the measured rule finds the cache cheaper and goes back. Each time
// the measured rule overrules it, the clearly-slow rule waits twice as long before it may fire
// again, so the two do not take turns for ever (on the Xeon: 11 changes of way in one run).
TEST(RingCopyIn, ClearlySlowRuleOverruledByMeasurementWaitsLonger) {
  Pair p;
  p.sender.SetClearlySlow(0.5);
  const size_t n = 128 << 10;
  const double cachedSender[4] = {0.4, 0.6, 0.6, 0.4};  // around the line; two slow in a row
  int streamed = 0, changes = 0;
  bool was = false;
  const int pieces = 40000;
  for (int i = 0; i < pieces; ++i) {
    const bool s = p.sender.NextPieceStreams();
    streamed += s;
    p.sender.ObservePiece(n, (uint64_t)((s ? 0.3 : cachedSender[i % 4]) * n));
    p.cost.cycles[s] += (uint64_t)((s ? 0.9 : 0.45) * n);  // streamed: the receiver reads memory
    p.cost.bytes[s] += n;
    changes += p.sender.streaming() != was;
    was = p.sender.streaming();
  }
  // Without the wait: 86% of the pieces streamed and 1053 changes. With it, a cycle is at most
  // kMaxWindow quiet cached pieces, two slow ones and a streamed window: ~6% streamed.
  EXPECT_LT(streamed, pieces / 10);
  EXPECT_LT(changes, pieces / 400);
}

// Medians: one preempted piece in every 40 (1000x its cost) does not make the sender switch,
// whichever way it keeps.
TEST(RingCopyIn, OnePreemptedPieceDoesNotDecide) {
  const size_t n = 128 << 10;
  for (bool startStreaming : {false, true}) {
    Pair p;
    if (startStreaming) {
      p.Drive(kBroadcastLike, kLook);
      ASSERT_TRUE(p.sender.streaming());
    }
    // Costs under which the current way is right.
    const Costs k = startStreaming ? kBroadcastLike : Costs{0.3, 0.1, 0.1, 0.5};
    for (int i = 0; i < 6000; ++i) {
      const bool s = p.sender.NextPieceStreams();
      double sender = s ? k.senderStreamed : k.senderCached;
      if (i % 40 == 39) sender *= 1000;
      p.sender.ObservePiece(n, (uint64_t)(sender * n));
      p.cost.cycles[s] += (uint64_t)((s ? k.receiverStreamed : k.receiverCached) * n);
      p.cost.bytes[s] += n;
      ASSERT_EQ(p.sender.streaming(), startStreaming) << i;
    }
  }
}

// Copy(): whichever way a piece goes, the ring receives the same bytes, and the segments it covers
// are marked with that way, which is what RecordRingRead charges the receiver's time to.
TEST(RingCopyIn, CopyDeliversTheBytesAndMarksTheirWay) {
  const size_t big = 128 << 10, cap = 1 << 20;
  std::vector<unsigned char> src(big), ring(cap + 32);
  for (size_t i = 0; i < big; ++i) src[i] = (unsigned char)(i * 131 + 7);
  Pair p;
  p.EnterSlowSpell();
  ASSERT_TRUE(p.sender.streaming());
  for (size_t off : {(size_t)0, (size_t)5, (size_t)16}) {
    std::fill(ring.begin(), ring.end(), 0);
    const size_t at = 3 * big + off;
    p.sender.Copy(ring.data() + at, at, cap, src.data(), big);
    EXPECT_EQ(memcmp(ring.data() + at, src.data(), big), 0) << off;
  }
  const size_t perSegment = cap / RingReadCost::kSegments;
  for (int seg = 0; seg < RingReadCost::kSegments; ++seg) {
    const bool covered = seg >= (int)(3 * big / perSegment) && seg <= (int)((4 * big + 15) / perSegment);
    EXPECT_EQ(p.cost.streamed[seg].load() != 0, covered) << seg;
  }
  const uint64_t before[2] = {p.cost.cycles[0].load(), p.cost.cycles[1].load()};
  tccl::RecordRingRead(&p.cost, 3 * big + 100, cap, big, 777);
  tccl::RecordRingRead(&p.cost, 0, cap, big, 555);
  EXPECT_EQ(p.cost.cycles[1].load() - before[1], 777u);
  EXPECT_EQ(p.cost.cycles[0].load() - before[0], 555u);
}

}  // namespace ringcopy

TEST(PlanCache, FindsOnlyTheSameCallAndEvictsTheOldest) {
  PlanCache cache;
  CollArgs a;
  a.count = 1;
  Plan p;
  p.schedule.scratchElems = 1;
  cache.Add(a, tcclFloat32, p);
  ASSERT_NE(cache.Find(a, tcclFloat32), nullptr);
  EXPECT_EQ(cache.Find(a, tcclFloat32)->schedule.scratchElems, 1u);
  EXPECT_EQ(cache.Find(a, tcclFloat64), nullptr);
  CollArgs b = a;
  b.root = 1;
  EXPECT_EQ(cache.Find(b, tcclFloat32), nullptr);
  b = a;
  b.inPlace = true;
  EXPECT_EQ(cache.Find(b, tcclFloat32), nullptr);
  b = a;
  b.requireCanonical = true;
  EXPECT_EQ(cache.Find(b, tcclFloat32), nullptr);
  for (size_t i = 2; i < 100; ++i) {  // many distinct calls: the first is evicted, the last kept
    b = a;
    b.count = i;
    cache.Add(b, tcclFloat32, p);
  }
  EXPECT_EQ(cache.Find(a, tcclFloat32), nullptr);
  EXPECT_NE(cache.Find(b, tcclFloat32), nullptr);
}

// Each message waits for the one before it on the same peer and direction (connections are
// ordered streams); receives and sends to one peer are separate streams, zero-byte messages and
// local ops are on none, and each step starts afresh. Each message's tag, and a small payload
// behind it, has its own place in the staging (8-byte aligned); a large send's needs none.
TEST(PrepareSchedule, LinksStreamsAndLaysOutTheStaging) {
  Schedule s;
  s.steps.push_back({{MakeSend(1, {kSendBuf, 0}, 4),      // 0: first send to 1
                      MakeRecv(1, {kRecvBuf, 0}, 4),      // 1: first receive from 1
                      MakeSend(2, {kSendBuf, 0}, 3),      // 2: first send to 2
                      MakeSend(1, {kSendBuf, 4}, 0),      // 3: zero bytes: not on the wire
                      MakeCopy({kSendBuf, 0}, {kRecvBuf, 8}, 4),  // 4: local
                      MakeRecvReduce(1, {kRecvBuf, 4}, {kRecvBuf, 4}, 4),  // 5: after 1
                      MakeSend(1, {kSendBuf, 8}, 4096)}});  // 6: after 0, not after 3; 16 KiB: not staged
  s.steps.push_back({{MakeSend(1, {kSendBuf, 0}, 4),      // a new step: first again
                      MakeRecv(1, {kRecvBuf, 0}, 4096)}});  // large: only its tag is staged
  PrepareSchedule(&s, 4);
  EXPECT_EQ(s.preparedForElemSize, 4u);
  std::vector<int> prev;
  std::vector<size_t> at;
  for (const Op& o : s.steps[0].ops) {
    prev.push_back(o.prevOnStream);
    at.push_back(o.stageAt);
  }
  EXPECT_EQ(prev, (std::vector<int>{-1, -1, -1, -1, -1, 1, 0}));
  // 32-byte tag + 16 B = 48; + 12 B = 44, aligned to 48.
  EXPECT_EQ(at, (std::vector<size_t>{0, 48, 96, 0, 0, 144, 0}));
  EXPECT_EQ(s.steps[1].ops[0].prevOnStream, -1);
  EXPECT_EQ(s.steps[1].ops[1].stageAt, 48u);
  EXPECT_EQ(s.stagingBytes, 192u);  // the larger step's: four small messages
}

// A staging owner's copies into shared scratch (Schedule::sharedScratch, algorithms/staged.cc) go
// through ExecEnv::copyToSharedScratch, where the communicator applies the ring's rule for slow
// stores (src/comm/shared_scratch_copy.h); every other copy, and any copy in a schedule without
// shared scratch, stays a memmove. The bytes arrive either way.
TEST(Execute, StagingCopiesIntoSharedScratchGoThroughTheCommunicatorsCopy) {
  struct Counted {
    int calls = 0;
    size_t bytes = 0;
  } counted;
  Waiter waiter(nullptr, false, 0, 0);
  ExecEnv env;
  env.waiter = &waiter;
  env.conns = {nullptr};
  env.copyCtx = &counted;
  env.copyToSharedScratch = [](void* ctx, void* dst, const void* src, size_t n) {
    auto* c = static_cast<Counted*>(ctx);
    ++c->calls;
    c->bytes += n;
    memcpy(dst, src, n);
  };
  for (bool shared : {true, false}) {
    counted = {};
    Schedule s;
    s.sharedScratch = shared;
    s.scratchElems = 64;
    s.steps.push_back({{MakeCopy({kSendBuf, 0}, {kScratchBuf, 0}, 64)}});   // staging: the hook
    s.steps.push_back({{MakeCopy({kScratchBuf, 0}, {kRecvBuf, 0}, 64)}});   // reading: memmove
    std::vector<float> send(64), recv(64, -1.0f), scratch(64);
    for (int i = 0; i < 64; ++i) send[i] = 0.5f * (float)i;
    const std::vector<void*> bufs = {send.data(), recv.data(), scratch.data()};
    ASSERT_TRUE(Execute(s, bufs, KernelsFor(tcclFloat, tcclSum), env, [] { return std::string("test"); }).ok());
    EXPECT_EQ(recv, send);
    EXPECT_EQ(counted.calls, shared ? 1 : 0);
    EXPECT_EQ(counted.bytes, shared ? 64 * sizeof(float) : 0u);
  }
}

}  // namespace
}  // namespace tccl

// The flight recorder's single writer and any-thread Dump (src/comm/flight_recorder.h): a writer
// rewriting a two-slot ring as fast as it can, a reader dumping meanwhile; every entry printed is
// one operation's (its count belongs to its sequence number), never a mix of two.
TEST(FlightRecorder, DumpsDuringStartsShowWholeEntries) {
  tccl::FlightRecorder rec(2);
  std::atomic<bool> done{false};
  std::thread writer([&] {
    for (uint64_t i = 0; i < 2000000; ++i) {
      tccl::FlightEntry e;
      e.seq = i + 1;  // not the number recorded: Start takes that apart
      e.op = "all_reduce";
      e.dtype = "int32";
      e.algo = "ring";
      e.count = i % 7 + 1;
      rec.Finish(rec.Start(e, i), true);
    }
    done = true;
  });
  tccl_test::FlightDumpCheck check;
  while (!done.load()) ASSERT_TRUE(tccl_test::CheckFlightDump(rec.Dump("test"), &check)) << check.badLine;
  writer.join();
  EXPECT_GT(check.entries, 0);
  EXPECT_EQ(0, check.torn) << "entries mixing two operations, of " << check.entries;
}

// The communicator's operation lock (src/comm/op_lock.h): one holder at a time, with more threads
// than cores so that waiters take both the yielding and the sleeping path.
TEST(OpLock, OneHolderAtATime) {
  tccl::OpLock lock;
  constexpr int kThreads = 3, kRounds = 100000;
  long counter = 0;  // plain: only the lock protects it (TSan checks the happens-before too)
  std::atomic<int> inside{0}, overlaps{0}, ready{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t)
    ts.emplace_back([&] {
      ready.fetch_add(1);
      while (ready.load() < kThreads) std::this_thread::yield();  // contend from the start
      for (int i = 0; i < kRounds; ++i) {
        std::lock_guard<tccl::OpLock> g(lock);
        if (inside.fetch_add(1) != 0) overlaps.fetch_add(1);
        long v = counter;
        if (i % 1000 == 0) std::this_thread::yield();  // hold it across a reschedule now and then
        counter = v + 1;
        inside.fetch_sub(1);
      }
    });
  for (auto& t : ts) t.join();
  EXPECT_EQ(0, overlaps.load());
  EXPECT_EQ((long)kThreads * kRounds, counter);
}
