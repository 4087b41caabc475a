// Unit tests for the parts under the shared-memory transport and the communicator's fast path:
// the low-latency line ring (transports/shm/ll_ring), the plan cache (src/comm/plan_cache), the
// flight recorder's lock-free writer and the operation lock (src/comm/), the tag check
// (src/exec/op_tag), the executor's schedule preparation (src/exec/executor).
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
#include "comm/flight_recorder.h"
#include "comm/op_lock.h"
#include "comm/plan_cache.h"
#include "exec/executor.h"
#include "exec/op_tag.h"
#include "transports/shm/ll_ring.h"
#include "transports/shm/ring_copy_in.h"
#include "tests/support/flight_dump.h"

namespace tccl {
namespace {

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

// When the sender streams: only after kSlowPiecesToStream large cached pieces in a row ran below
// the line (one slow piece may be a preemption), for kStreamedPieces pieces, then it tries the
// cache again; small pieces and fast ones never make it stream.
TEST(RingCopyIn, StreamsOnlyWhileCachedCopiesAreSlow) {
  using tccl::RingCopyIn;
  const size_t big = 128 << 10;
  const double slow = big / (RingCopyIn::kStreamBelowBytesPerSecond / 4);  // seconds
  const double fast = big / (RingCopyIn::kStreamBelowBytesPerSecond * 4);
  RingCopyIn c;
  for (int i = 0; i < 100; ++i) c.ObserveCached(big, fast);
  EXPECT_FALSE(c.NextLargePieceStreams());
  for (int i = 0; i < 100; ++i) c.ObserveCached(RingCopyIn::kTimedBytes - 1, 1.0);  // too small to judge
  EXPECT_FALSE(c.NextLargePieceStreams());
  for (int i = 0; i < 10; ++i) {  // slow pieces that never come in a row
    c.ObserveCached(big, slow);
    c.ObserveCached(big, fast);
  }
  EXPECT_FALSE(c.NextLargePieceStreams());
  for (int i = 0; i < RingCopyIn::kSlowPiecesToStream; ++i) {
    EXPECT_FALSE(c.streaming());
    c.ObserveCached(big, slow);
  }
  EXPECT_TRUE(c.streaming());
  // Re-tries that find the cache still slow stream again at once, for twice as long each time,
  // up to kMaxStreamedPieces.
  int window = RingCopyIn::kStreamedPieces;
  for (int retry = 0; retry < 6; ++retry) {
    for (int i = 0; i < window; ++i) ASSERT_TRUE(c.NextLargePieceStreams()) << retry << " " << i;
    EXPECT_FALSE(c.NextLargePieceStreams());  // the re-try through the cache
    c.ObserveCached(big, slow);
    EXPECT_TRUE(c.streaming());
    window = std::min(2 * window, RingCopyIn::kMaxStreamedPieces);
  }
  EXPECT_EQ(window, RingCopyIn::kMaxStreamedPieces);
  for (int i = 0; i < window; ++i) ASSERT_TRUE(c.NextLargePieceStreams());
  // A fast re-try ends it, and the next spell starts again from the short window.
  c.ObserveCached(big, fast);
  EXPECT_FALSE(c.streaming());
  for (int i = 0; i < 5; ++i) c.ObserveCached(big, fast);
  for (int i = 0; i < RingCopyIn::kSlowPiecesToStream; ++i) c.ObserveCached(big, slow);
  int streamed = 0;
  while (c.NextLargePieceStreams()) ++streamed;
  EXPECT_EQ(streamed, RingCopyIn::kStreamedPieces);
}

// Copy() itself: whichever way a piece goes, the ring receives the same bytes.
TEST(RingCopyIn, CopyDeliversTheBytesWhileStreaming) {
  using tccl::RingCopyIn;
  const size_t big = 128 << 10;
  std::vector<unsigned char> src(big), dst(big + 32);
  for (size_t i = 0; i < big; ++i) src[i] = (unsigned char)(i * 131 + 7);
  RingCopyIn c;
  for (int i = 0; i < RingCopyIn::kSlowPiecesToStream; ++i) c.ObserveCached(big, 1.0);
  ASSERT_TRUE(c.streaming());
  for (size_t off : {(size_t)0, (size_t)5, (size_t)16}) {
    std::fill(dst.begin(), dst.end(), 0);
    c.Copy(dst.data() + off, src.data(), big);
    c.FenceIfStreamed();
    EXPECT_EQ(memcmp(dst.data() + off, src.data(), big), 0) << off;
  }
}

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
      e.seq = i;
      e.op = "all_reduce";
      e.dtype = "int32";
      e.algo = "ring";
      e.count = i % 7 + 1;
      rec.Finish(rec.Start(e), true);
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

// When two ranks frame a message differently (a mismatched call), the receiver reads payload
// where it expects a tag; the report must then say so instead of printing the payload's bytes as
// a sequence number, count and reduction (seen in the fault tests: "all_reduce #4656722015783223296
// (4674736414296899584 x int8, op 128, algorithm 64)").
TEST(OpTagCheck, PayloadReadAsATagIsNotPlausible) {
  tccl::OpTag coll;
  coll.seq = 3;
  coll.count = 4096;
  coll.bytes = 16384;
  coll.kind = (uint8_t)tccl::CollKind::AllReduce;
  coll.dtype = tcclFloat32;
  coll.redop = tcclSum;
  EXPECT_TRUE(tccl::PlausibleTag(coll));
  tccl::OpTag p2p;
  p2p.kind = tccl::OpTag::kP2P;
  p2p.bytes = 64;
  EXPECT_TRUE(tccl::PlausibleTag(p2p));

  float payload[8] = {0.0f, 5.0f, 0.0f, 5.25f, 1.0f, 2.0f, 3.0f, 4.0f};
  tccl::OpTag garbage;
  static_assert(sizeof(payload) == sizeof(garbage), "one tag's worth of floats");
  memcpy(&garbage, payload, sizeof(garbage));
  EXPECT_FALSE(tccl::PlausibleTag(garbage));
  tccl::OpTag zeros;
  const unsigned char zeroBytes[sizeof(zeros)] = {};
  memcpy(&zeros, zeroBytes, sizeof(zeros));
  EXPECT_FALSE(tccl::PlausibleTag(zeros));  // no message has zero bytes
  tccl::OpTag badAlgo = coll;
  badAlgo.algo = 250;
  EXPECT_FALSE(tccl::PlausibleTag(badAlgo));
}
