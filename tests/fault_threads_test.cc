// Failure handling with ranks as threads: abort from another thread, timeouts, mismatched calls,
// the unusable-after-failure rule, and the flight recorder API.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "api/handles.h"
#include "tccl/tccl.h"
#include "tests/support/flight_dump.h"
#include "tests/support/scoped_env.h"

namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::vector<tcclComm_t> MakeComms(int n, int timeoutSec = 0) {
  std::vector<tcclComm_t> comms(n);
  if (timeoutSec == 0) {
    EXPECT_EQ(tcclSuccess, tcclCommInitAll(comms.data(), n, nullptr)) << tcclGetLastError(nullptr);
    return comms;
  }
  tcclUniqueId id;
  EXPECT_EQ(tcclSuccess, tcclGetUniqueId(&id));
  std::vector<std::thread> ts;
  for (int r = 0; r < n; ++r)
    ts.emplace_back([&, r] {
      tcclConfig_t cfg = TCCL_CONFIG_INITIALIZER;
      cfg.timeoutSec = timeoutSec;
      EXPECT_EQ(tcclSuccess, tcclCommInitRankConfig(&comms[r], n, id, r, &cfg)) << tcclGetLastError(nullptr);
    });
  for (auto& t : ts) t.join();
  return comms;
}

struct CallResult {
  tcclResult_t code = tcclSuccess;
  std::string message;
  double seconds = 0;  // from the call until it returned
};

CallResult TimedAllReduce(tcclComm_t comm, size_t count) {
  std::vector<float> buf(count, 1.0f);
  CallResult r;
  auto t = Clock::now();
  r.code = tcclAllReduce(buf.data(), buf.data(), count, tcclFloat32, tcclSum, comm, nullptr);
  r.seconds = SecondsSince(t);
  r.message = tcclGetLastError(nullptr);
  return r;
}

TEST(Faults, AbortFromAnotherThreadReleasesTheBlockedCallAndTellsThePeers) {
  auto comms = MakeComms(3);
  // Two threads blocked in rank 0's communicator: one inside an all-reduce that ranks 1 and 2
  // never join, one queued behind it (operations on a communicator run one at a time).
  CallResult blocked[2];
  std::thread t0([&] { blocked[0] = TimedAllReduce(comms[0], 1 << 16); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::thread t1([&] { blocked[1] = TimedAllReduce(comms[0], 100); });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  auto abortAt = Clock::now();
  EXPECT_EQ(tcclSuccess, tcclCommAbort(comms[0]));
  double abortTook = SecondsSince(abortAt);
  t0.join();
  t1.join();
  double released = SecondsSince(abortAt);
  EXPECT_LT(abortTook, 1.0);
  EXPECT_LT(released, 1.0) << "the blocked calls returned " << released << " s after tcclCommAbort";
  for (auto& b : blocked) {
    EXPECT_NE(b.code, tcclSuccess);
    EXPECT_NE(b.message.find("aborted"), std::string::npos) << b.message;
  }
  // The peers learn of it at their next wait, not at their deadline.
  for (int r = 1; r < 3; ++r) {
    CallResult peer = TimedAllReduce(comms[r], 1 << 16);
    EXPECT_EQ(peer.code, tcclRemoteError) << peer.message;
    EXPECT_LT(peer.seconds, 1.0);
    EXPECT_NE(peer.message.find("rank 0 (host"), std::string::npos) << peer.message;
    EXPECT_NE(peer.message.find("aborted"), std::string::npos) << peer.message;
    EXPECT_EQ(tcclSuccess, tcclCommDestroy(comms[r]));
  }
  printf("abort returned in %.3f ms; both blocked calls released after %.3f ms\n", abortTook * 1e3, released * 1e3);
}

// A call holds its communicator by its thread's hazard slot, not by a reference count
// (src/api/hazard_slots.h; by a reference where the kernel refuses membarrier). Destroyed by
// another thread while such a call waits in it, the communicator must stay alive and working until
// that call returns (it completes, with the right sum), and then be freed, by the returning call.
TEST(Faults, DestroyDuringACallKeepsTheCommunicatorUntilTheCallReturns) {
  auto comms = MakeComms(2);
  std::weak_ptr<tccl::Communicator> watch;
  {
    tccl::CommRef held;
    ASSERT_TRUE(tccl::AcquireComm(comms[0], "test", &held).ok());
    watch = held.Share();
  }
  const size_t count = 1024;
  std::vector<float> v0(count, 1.0f), v1(count, 2.0f);
  std::atomic<bool> returned{false};
  tcclResult_t rc0 = tcclInternalError;
  std::thread t0([&] {
    rc0 = tcclAllReduce(v0.data(), v0.data(), count, tcclFloat32, tcclSum, comms[0], nullptr);
    returned = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // t0 waits in its call for rank 1
  ASSERT_FALSE(returned);
  auto destroyAt = Clock::now();
  EXPECT_EQ(tcclSuccess, tcclCommDestroy(comms[0]));
  EXPECT_LT(SecondsSince(destroyAt), 0.5) << "tcclCommDestroy waited for the call";
  EXPECT_FALSE(watch.expired()) << "freed under a call still using it";
  EXPECT_EQ(tcclSuccess, tcclAllReduce(v1.data(), v1.data(), count, tcclFloat32, tcclSum, comms[1], nullptr))
      << tcclGetLastError(nullptr);
  t0.join();
  EXPECT_EQ(tcclSuccess, rc0);
  EXPECT_EQ(3.0f, v0[0]);
  EXPECT_EQ(3.0f, v0[count - 1]);
  EXPECT_EQ(3.0f, v1[0]);
  EXPECT_TRUE(watch.expired()) << "kept alive after the last call using it returned";
  EXPECT_EQ(tcclSuccess, tcclCommDestroy(comms[1]));
}

TEST(Faults, APeerThatNeverCallsTimesOutNamingIt) {
  auto comms = MakeComms(2, /*timeoutSec=*/1);
  CallResult r = TimedAllReduce(comms[0], 100);
  EXPECT_EQ(r.code, tcclTimeout) << r.message;
  EXPECT_GE(r.seconds, 0.99);
  EXPECT_LT(r.seconds, 3.0);
  EXPECT_NE(r.message.find("rank 1 (host"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("all_reduce #0 (100 x float"), std::string::npos) << r.message;
  tcclResult_t async = tcclSuccess;
  EXPECT_EQ(tcclSuccess, tcclCommGetAsyncError(comms[0], &async));
  EXPECT_EQ(async, tcclTimeout);
  // Rank 1 is told by rank 0's failure record.
  CallResult peer = TimedAllReduce(comms[1], 100);
  EXPECT_EQ(peer.code, tcclRemoteError) << peer.message;
  EXPECT_NE(peer.message.find("rank 0 (host"), std::string::npos) << peer.message;
  for (auto c : comms) EXPECT_EQ(tcclSuccess, tcclCommAbort(c));
}

TEST(Faults, MismatchedCountsAreReportedAndTheCommunicatorStaysUnusable) {
  auto comms = MakeComms(2);
  CallResult res[2];
  std::thread t0([&] { res[0] = TimedAllReduce(comms[0], 1000); });
  std::thread t1([&] { res[1] = TimedAllReduce(comms[1], 1001); });
  t0.join();
  t1.join();
  for (int r = 0; r < 2; ++r) {
    EXPECT_NE(res[r].code, tcclSuccess);
    EXPECT_NE(res[r].message.find("mismatched calls"), std::string::npos) << res[r].message;
    EXPECT_LT(res[r].seconds, 5.0);
  }
  // Later calls do not touch the wire: they report the earlier failure.
  CallResult again = TimedAllReduce(comms[0], 1000);
  EXPECT_NE(again.code, tcclSuccess);
  EXPECT_NE(again.message.find("unusable after an earlier failure"), std::string::npos) << again.message;
  for (auto c : comms) EXPECT_EQ(tcclSuccess, tcclCommDestroy(c));
}

TEST(Faults, MismatchedSendRecvSizesAreReported) {
  auto comms = MakeComms(2);
  std::vector<char> a(100), b(200);
  tcclResult_t rc[2];
  std::thread t0([&] { rc[0] = tcclSend(a.data(), 100, tcclUint8, 1, comms[0], nullptr); });
  std::thread t1([&] { rc[1] = tcclRecv(b.data(), 200, tcclUint8, 0, comms[1], nullptr); });
  t0.join();
  t1.join();
  EXPECT_NE(rc[1], tcclSuccess);  // the receiver sees the size in the tag
  for (auto c : comms) EXPECT_EQ(tcclSuccess, tcclCommAbort(c));
}

// Over shared memory a message travels as LL lines or in the byte ring by its size. A receive of
// another size than the send looks for the message where it is not, where no tag check sees it:
// the transport says so at once, both ways (the 4 KiB send with its tag in one byte-ring message
// against a 512 B receive that looks in the lines, and the reverse), instead of at the timeout.
TEST(Faults, SendRecvSizesFramedOtherwiseAreReportedAtOnce) {
  const struct {
    size_t sent, expected;
    const char* where;
  } cases[] = {{4096, 512, "sent its next message in the byte ring"}, {512, 4096, "sent its next message as lines"}};
  for (const auto& c : cases) {
    auto comms = MakeComms(2, 30);
    std::vector<char> a(c.sent), b(c.expected);
    tcclResult_t sent = tcclInternalError;
    CallResult got;
    std::thread t0([&] { sent = tcclSend(a.data(), c.sent, tcclUint8, 1, comms[0], nullptr); });
    std::thread t1([&] {
      auto t = Clock::now();
      got.code = tcclRecv(b.data(), c.expected, tcclUint8, 0, comms[1], nullptr);
      got.seconds = SecondsSince(t);
      got.message = tcclGetLastError(nullptr);
    });
    t0.join();
    t1.join();
    EXPECT_EQ(sent, tcclSuccess) << c.sent;  // the ring holds the message
    EXPECT_EQ(got.code, tcclInvalidUsage) << got.message;
    EXPECT_NE(got.message.find("mismatched calls across ranks: rank 0 " + std::string(c.where)), std::string::npos)
        << got.message;
    EXPECT_LT(got.seconds, 5.0) << got.message;
    for (auto comm : comms) EXPECT_EQ(tcclSuccess, tcclCommAbort(comm));
  }
}

TEST(Faults, FlightRecorderListsRecentOperations) {
  auto comms = MakeComms(2);
  std::vector<std::thread> ts;
  for (int r = 0; r < 2; ++r)
    ts.emplace_back([&, r] {
      for (int i = 0; i < 3; ++i) EXPECT_EQ(tcclSuccess, TimedAllReduce(comms[r], 10 + i).code);
      std::vector<float> x(8, 1.0f);
      EXPECT_EQ(tcclSuccess, tcclBroadcast(x.data(), x.data(), 8, tcclFloat32, 1, comms[r], nullptr));
    });
  for (auto& t : ts) t.join();
  char buf[8192];
  ASSERT_EQ(tcclSuccess, tcclCommDumpFlightRecorder(comms[0], buf, sizeof(buf)));
  std::string text = buf;
  EXPECT_NE(text.find("last 4 of 4 operations"), std::string::npos) << text;
  EXPECT_NE(text.find("#0 all_reduce 10 x float"), std::string::npos) << text;
  EXPECT_NE(text.find("#2 all_reduce 12 x float"), std::string::npos) << text;
  EXPECT_NE(text.find("#3 broadcast 8 x float root 1"), std::string::npos) << text;
  EXPECT_NE(text.find("peers [1]"), std::string::npos) << text;
  EXPECT_EQ(text.find("RUNNING"), std::string::npos) << text;
  char tiny[16];
  ASSERT_EQ(tcclSuccess, tcclCommDumpFlightRecorder(comms[0], tiny, sizeof(tiny)));
  EXPECT_EQ(strlen(tiny), sizeof(tiny) - 1);
  EXPECT_EQ(tcclInvalidArgument, tcclCommDumpFlightRecorder(comms[0], tiny, 0));
  EXPECT_EQ(tcclSuccess, tcclCommDumpFlightRecorder(comms[0], nullptr, 0));  // to the log
  for (auto c : comms) EXPECT_EQ(tcclSuccess, tcclCommDestroy(c));
  EXPECT_EQ(tcclInvalidArgument, tcclCommDumpFlightRecorder(comms[0], buf, sizeof(buf)));
}

// The recorder reads the clock at an operation's end only where the duration can matter
// (kFlightTimedFromBytes): an operation that waited for a peer, or one of 4 KiB or more, is timed;
// a small one that never waited is dumped as such (no second clock read on the small call's path).
TEST(Faults, FlightRecorderTimesWhatWaitedOrIsLarge) {
  auto comms = MakeComms(2);
  std::vector<std::thread> ts;
  for (int r = 0; r < 2; ++r)
    ts.emplace_back([&, r] {
      if (r == 1) std::this_thread::sleep_for(std::chrono::milliseconds(50));  // rank 0 waits
      EXPECT_EQ(tcclSuccess, TimedAllReduce(comms[r], 2).code);
      EXPECT_EQ(tcclSuccess, TimedAllReduce(comms[r], 1024).code);  // 4 KiB
    });
  for (auto& t : ts) t.join();
  char buf[8192];
  ASSERT_EQ(tcclSuccess, tcclCommDumpFlightRecorder(comms[0], buf, sizeof(buf)));
  std::string text = buf;
  double waitedUs = 0, largeUs = -1;
  const size_t waitedAt = text.find("#0 all_reduce 2 x float"), largeAt = text.find("#1 all_reduce 1024 x float");
  ASSERT_NE(waitedAt, std::string::npos) << text;
  ASSERT_NE(largeAt, std::string::npos) << text;
  EXPECT_EQ(1, sscanf(text.c_str() + text.find("took", waitedAt), "took %lf us", &waitedUs)) << text;
  EXPECT_GT(waitedUs, 20000) << text;  // the 50 ms it waited for rank 1
  EXPECT_EQ(1, sscanf(text.c_str() + text.find("took", largeAt), "took %lf us", &largeUs)) << text;
  EXPECT_GE(largeUs, 0) << text;
  for (auto c : comms) EXPECT_EQ(tcclSuccess, tcclCommDestroy(c));

  tcclComm_t one = nullptr;  // one rank: nothing to wait for
  ASSERT_EQ(tcclSuccess, tcclCommInitAll(&one, 1, nullptr));
  EXPECT_EQ(tcclSuccess, TimedAllReduce(one, 2).code);
  ASSERT_EQ(tcclSuccess, tcclCommDumpFlightRecorder(one, buf, sizeof(buf)));
  text = buf;
  EXPECT_NE(text.find("#0 all_reduce 2 x float"), std::string::npos) << text;
  EXPECT_NE(text.find("done, started"), std::string::npos) << text;
  EXPECT_NE(text.find("without waiting for a peer"), std::string::npos) << text;
  EXPECT_EQ(tcclSuccess, tcclCommDestroy(one));
}

// A repeated call reuses its plan, and with it the plan's flight-recorder entry (op, algorithm,
// peers): every repetition must still be recorded whole and with its own sequence number, and a
// send/recv group (no plan) names its peer too.
TEST(Faults, FlightRecorderEntriesOfRepeatedCallsAndSendRecv) {
  auto comms = MakeComms(2);
  std::vector<std::thread> ts;
  for (int r = 0; r < 2; ++r)
    ts.emplace_back([&, r] {
      for (int i = 0; i < 3; ++i) EXPECT_EQ(tcclSuccess, TimedAllReduce(comms[r], 16).code);
      std::vector<char> b(64);
      EXPECT_EQ(tcclSuccess, r == 0 ? tcclSend(b.data(), 64, tcclUint8, 1, comms[r], nullptr)
                                    : tcclRecv(b.data(), 64, tcclUint8, 0, comms[r], nullptr));
    });
  for (auto& t : ts) t.join();
  for (int r = 0; r < 2; ++r) {
    char buf[8192];
    ASSERT_EQ(tcclSuccess, tcclCommDumpFlightRecorder(comms[r], buf, sizeof(buf)));
    std::string text = buf;
    const std::string peer = "peers [" + std::to_string(1 - r) + "]";
    for (int i = 0; i < 3; ++i) {
      const std::string head = "#" + std::to_string(i) + " all_reduce 16 x float";
      size_t at = text.find(head);
      ASSERT_NE(at, std::string::npos) << head << "\n" << text;
      const std::string line = text.substr(at, text.find('\n', at) - at);
      EXPECT_NE(line.find(peer), std::string::npos) << line;
      EXPECT_NE(line.find("done"), std::string::npos) << line;
    }
    size_t at = text.find("#0 send/recv 64 x bytes");
    ASSERT_NE(at, std::string::npos) << text;
    EXPECT_NE(text.substr(at, text.find('\n', at) - at).find(peer), std::string::npos) << text;
  }
  for (auto c : comms) EXPECT_EQ(tcclSuccess, tcclCommDestroy(c));
}

// The recorder's writer takes no lock (src/comm/flight_recorder.h): a dump on another thread while
// operations run must show each entry whole (its count matches its sequence number here) or say it
// was overwritten, never a mix of two operations. Under TSan this is also the race check.
TEST(Faults, FlightRecorderDumpsWhileOperationsRun) {
  std::vector<tcclComm_t> comms;
  {
    // Two entries: every operation rewrites a slot the dumper is reading often.
    tccl_test::ScopedEnv entries("TCCL_FLIGHT_RECORDER_ENTRIES", "2");
    comms = MakeComms(2);
  }
  constexpr int kOps = 20000;
  std::atomic<bool> running{true};
  std::vector<std::thread> ts;
  for (int r = 0; r < 2; ++r)
    ts.emplace_back([&, r] {
      std::vector<int32_t> x(8, 1);
      for (int i = 0; i < kOps; ++i)
        ASSERT_EQ(tcclSuccess, tcclAllReduce(x.data(), x.data(), (size_t)(i % 7 + 1), tcclInt32, tcclSum, comms[r], nullptr));
    });
  int dumps = 0;
  tccl_test::FlightDumpCheck check;
  std::thread dumper([&] {
    std::vector<char> buf(1 << 16);
    while (running.load()) {
      ASSERT_EQ(tcclSuccess, tcclCommDumpFlightRecorder(comms[0], buf.data(), buf.size()));
      ++dumps;
      ASSERT_TRUE(tccl_test::CheckFlightDump(buf.data(), &check)) << check.badLine;
    }
  });
  for (auto& t : ts) t.join();
  running = false;
  dumper.join();
  EXPECT_GT(dumps, 0);
  EXPECT_GT(check.entries, 0);
  EXPECT_EQ(0, check.torn) << "entries mixing two operations";
  for (auto c : comms) EXPECT_EQ(tcclSuccess, tcclCommDestroy(c));
}

}  // namespace
