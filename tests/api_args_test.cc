// Bad input at every API entry gets a clear error, changes nothing, and leaves the communicator
// usable (SPEC section 5). Each rejected case has its own assertion.
#include <gtest/gtest.h>

#include <dirent.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/scoped_env.h"
#include "tccl/tccl.h"

namespace {

std::string Last() { return tcclGetLastError(nullptr); }

class TwoRanks : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(tcclSuccess, tcclCommInitAll(comms_, 2, nullptr)) << Last(); }
  void TearDown() override {
    for (tcclComm_t c : comms_)
      if (c) tcclCommDestroy(c);
  }
  // Proves the communicator still works: a real two-rank all-reduce.
  void ExpectUsable() {
    std::vector<int> out(2);
    std::thread t[2];
    tcclResult_t rc[2];
    for (int r = 0; r < 2; ++r)
      t[r] = std::thread([&, r] {
        int in = r + 1;
        rc[r] = tcclAllReduce(&in, &out[r], 1, tcclInt32, tcclSum, comms_[r], nullptr);
      });
    for (auto& x : t) x.join();
    EXPECT_EQ(rc[0], tcclSuccess);
    EXPECT_EQ(rc[1], tcclSuccess);
    EXPECT_EQ(out[0], 3);
    EXPECT_EQ(out[1], 3);
  }
  tcclComm_t comms_[2] = {nullptr, nullptr};
};

#define EXPECT_REJECTED(call, code, words)                                         \
  do {                                                                             \
    EXPECT_EQ((call), code);                                                       \
    EXPECT_NE(Last().find(words), std::string::npos) << "message: " << Last();     \
  } while (0)

TEST_F(TwoRanks, NullBuffers) {
  float x[4] = {1, 2, 3, 4};
  tcclComm_t c = comms_[0];
  EXPECT_REJECTED(tcclAllReduce(nullptr, x, 4, tcclFloat, tcclSum, c, nullptr), tcclInvalidArgument, "sendbuff is NULL");
  EXPECT_REJECTED(tcclAllReduce(x, nullptr, 4, tcclFloat, tcclSum, c, nullptr), tcclInvalidArgument, "recvbuff is NULL");
  EXPECT_REJECTED(tcclBroadcast(nullptr, x, 4, tcclFloat, 0, c, nullptr), tcclInvalidArgument, "sendbuff (on the root)");
  EXPECT_REJECTED(tcclReduce(x, nullptr, 4, tcclFloat, tcclSum, 0, c, nullptr), tcclInvalidArgument, "recvbuff (on the root)");
  EXPECT_REJECTED(tcclAllGather(nullptr, x, 2, tcclFloat, c, nullptr), tcclInvalidArgument, "sendbuff is NULL");
  EXPECT_REJECTED(tcclReduceScatter(x, nullptr, 2, tcclFloat, tcclSum, c, nullptr), tcclInvalidArgument, "recvbuff is NULL");
  EXPECT_REJECTED(tcclAlltoAll(nullptr, x, 2, tcclFloat, c, nullptr), tcclInvalidArgument, "sendbuff is NULL");
  EXPECT_REJECTED(tcclSend(nullptr, 4, tcclFloat, 1, c, nullptr), tcclInvalidArgument, "sendbuff is NULL");
  EXPECT_REJECTED(tcclRecv(nullptr, 4, tcclFloat, 1, c, nullptr), tcclInvalidArgument, "recvbuff is NULL");
  EXPECT_EQ(x[0], 1);  // nothing written
  ExpectUsable();
}

TEST_F(TwoRanks, BadTypeOpRootPeer) {
  float x[4] = {0};
  tcclComm_t c = comms_[0];
  EXPECT_REJECTED(tcclAllReduce(x, x, 4, (tcclDataType_t)tcclNumTypes, tcclSum, c, nullptr), tcclInvalidArgument, "datatype");
  EXPECT_REJECTED(tcclAllReduce(x, x, 4, (tcclDataType_t)-1, tcclSum, c, nullptr), tcclInvalidArgument, "datatype");
  EXPECT_REJECTED(tcclAllReduce(x, x, 4, tcclFloat, (tcclRedOp_t)tcclNumOps, c, nullptr), tcclInvalidArgument, "reduction op");
  EXPECT_REJECTED(tcclReduceScatter(x, x, 1, tcclFloat, (tcclRedOp_t)99, c, nullptr), tcclInvalidArgument, "reduction op");
  EXPECT_REJECTED(tcclBroadcast(x, x, 4, tcclFloat, 2, c, nullptr), tcclInvalidArgument, "root 2 is outside [0, 2)");
  EXPECT_REJECTED(tcclBroadcast(x, x, 4, tcclFloat, -1, c, nullptr), tcclInvalidArgument, "root -1");
  EXPECT_REJECTED(tcclReduce(x, x, 4, tcclFloat, tcclSum, 5, c, nullptr), tcclInvalidArgument, "root 5");
  EXPECT_REJECTED(tcclSend(x, 4, tcclFloat, 2, c, nullptr), tcclInvalidArgument, "peer 2");
  EXPECT_REJECTED(tcclRecv(x, 4, tcclFloat, -3, c, nullptr), tcclInvalidArgument, "peer -3");
  ExpectUsable();
}

TEST_F(TwoRanks, OverflowingCounts) {
  float x[4] = {0};
  tcclComm_t c = comms_[0];
  EXPECT_REJECTED(tcclAllReduce(x, x, SIZE_MAX, tcclFloat, tcclSum, c, nullptr), tcclInvalidArgument, "overflows");
  EXPECT_REJECTED(tcclAllGather(x, x, SIZE_MAX / 8, tcclDouble, c, nullptr), tcclInvalidArgument, "overflows");
  EXPECT_REJECTED(tcclAlltoAll(x, x, SIZE_MAX / 16, tcclInt64, c, nullptr), tcclInvalidArgument, "overflows");
  ExpectUsable();
}

TEST_F(TwoRanks, OverlappingBuffers) {
  float x[16] = {0};
  tcclComm_t c = comms_[0];  // rank 0
  EXPECT_REJECTED(tcclAllReduce(x, x + 1, 4, tcclFloat, tcclSum, c, nullptr), tcclInvalidArgument, "overlap");
  // All-gather in place means sendbuff == recvbuff + rank*count; anything else overlapping is an error.
  EXPECT_REJECTED(tcclAllGather(x + 2, x, 4, tcclFloat, c, nullptr), tcclInvalidArgument, "recvbuff + rank*sendcount");
  EXPECT_REJECTED(tcclReduceScatter(x, x + 1, 4, tcclFloat, tcclSum, c, nullptr), tcclInvalidArgument, "sendbuff + rank*recvcount");
  EXPECT_REJECTED(tcclAlltoAll(x, x + 2, 2, tcclFloat, c, nullptr), tcclInvalidArgument, "overlap");
  ExpectUsable();
}

TEST_F(TwoRanks, WrongStreamType) {
  float x[4] = {0};
  int notAStream = 0;
  EXPECT_REJECTED(tcclAllReduce(x, x, 4, tcclFloat, tcclSum, comms_[0], &notAStream), tcclInvalidArgument, "not a host stream");
  EXPECT_REJECTED(tcclStreamSynchronize(&notAStream), tcclInvalidArgument, "not a host stream");
  EXPECT_REJECTED(tcclStreamDestroy(&notAStream), tcclInvalidArgument, "not a live host stream");
  ExpectUsable();
}

TEST_F(TwoRanks, ZeroCountWithNullBuffersIsANoOp) {
  std::thread t[2];
  tcclResult_t rc[2];
  for (int r = 0; r < 2; ++r)
    t[r] = std::thread([&, r] { rc[r] = tcclAllReduce(nullptr, nullptr, 0, tcclFloat, tcclSum, comms_[r], nullptr); });
  for (auto& x : t) x.join();
  EXPECT_EQ(rc[0], tcclSuccess);
  EXPECT_EQ(rc[1], tcclSuccess);
  ExpectUsable();
}

TEST_F(TwoRanks, HostStreamsEnqueueAndSynchronize) {
  tcclStream_t s[2];
  std::vector<float> in[2], out[2];
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(tcclSuccess, tcclStreamCreate(&s[r]));
    in[r].assign(1000, (float)(r + 1));
    out[r].assign(1000, 0);
  }
  std::thread t[2];
  for (int r = 0; r < 2; ++r)
    t[r] = std::thread([&, r] {
      for (int i = 0; i < 10; ++i)  // ten calls in flight, completed in order
        EXPECT_EQ(tcclSuccess, tcclAllReduce(in[r].data(), out[r].data(), 1000, tcclFloat, tcclSum, comms_[r], s[r]));
      EXPECT_EQ(tcclSuccess, tcclStreamSynchronize(s[r]));
      EXPECT_EQ(tcclSuccess, tcclStreamQuery(s[r]));
    });
  for (auto& x : t) x.join();
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(out[r][999], 3.0f);
    EXPECT_EQ(tcclSuccess, tcclStreamDestroy(s[r]));
  }
}

TEST_F(TwoRanks, GroupedSendRecvBothWays) {
  // Large enough to exceed the channel buffers: only correct grouping avoids deadlock.
  const size_t n = 3 << 20;
  std::vector<int> a(n, 1), b(n, 2), ra(n), rb(n);
  std::thread t[2];
  tcclResult_t rc[2];
  for (int r = 0; r < 2; ++r)
    t[r] = std::thread([&, r] {
      tcclGroupStart();
      tcclSend(r == 0 ? a.data() : b.data(), n, tcclInt32, 1 - r, comms_[r], nullptr);
      tcclRecv(r == 0 ? ra.data() : rb.data(), n, tcclInt32, 1 - r, comms_[r], nullptr);
      rc[r] = tcclGroupEnd();
    });
  for (auto& x : t) x.join();
  EXPECT_EQ(rc[0], tcclSuccess);
  EXPECT_EQ(rc[1], tcclSuccess);
  EXPECT_EQ(ra[n - 1], 2);
  EXPECT_EQ(rb[0], 1);
}

// Many messages to one peer in one group, of sizes around the inline limit and zero: they are one
// step of ordered streams (each waits for the one before it on its peer and direction), and small
// ones travel staged with their tags. Every byte must arrive where its receive put it.
TEST_F(TwoRanks, GroupOfManyMessagesOfMixedSizesToOnePeer) {
  const size_t sizes[] = {0, 1, 7, 8192, 8193, 20000, 56, 57};
  const int K = 400;
  std::vector<size_t> at(K + 1, 0);
  for (int k = 0; k < K; ++k) at[k + 1] = at[k] + sizes[k % 8];
  std::vector<unsigned char> out[2], in[2];
  for (int r = 0; r < 2; ++r) {
    out[r].resize(at[K]);
    in[r].assign(at[K], 0);
    for (size_t i = 0; i < at[K]; ++i) out[r][i] = (unsigned char)(i * 31 + r * 7 + i / 251);
  }
  std::thread t[2];
  tcclResult_t rc[2];
  for (int r = 0; r < 2; ++r)
    t[r] = std::thread([&, r] {
      tcclGroupStart();
      for (int k = 0; k < K; ++k) {  // sends and receives interleaved, as a user might post them
        tcclSend(out[r].data() + at[k], sizes[k % 8], tcclUint8, 1 - r, comms_[r], nullptr);
        tcclRecv(in[r].data() + at[k], sizes[k % 8], tcclUint8, 1 - r, comms_[r], nullptr);
      }
      rc[r] = tcclGroupEnd();
    });
  for (auto& x : t) x.join();
  EXPECT_EQ(rc[0], tcclSuccess) << Last();
  EXPECT_EQ(rc[1], tcclSuccess) << Last();
  EXPECT_TRUE(in[0] == out[1]);
  EXPECT_TRUE(in[1] == out[0]);
}

TEST_F(TwoRanks, OneThreadDrivesBothRanksInAGroup) {
  int in[2] = {5, 7}, out[2] = {0, 0};
  ASSERT_EQ(tcclSuccess, tcclGroupStart());
  for (int r = 0; r < 2; ++r) ASSERT_EQ(tcclSuccess, tcclAllReduce(&in[r], &out[r], 1, tcclInt32, tcclSum, comms_[r], nullptr));
  ASSERT_EQ(tcclSuccess, tcclGroupEnd()) << Last();
  EXPECT_EQ(out[0], 12);
  EXPECT_EQ(out[1], 12);
}

TEST_F(TwoRanks, MemAllocAndRegistration) {
  void* p = reinterpret_cast<void*>(1);
  EXPECT_EQ(tcclInvalidArgument, tcclMemAlloc(nullptr, 64));
  EXPECT_EQ(tcclInvalidArgument, tcclMemAlloc(&p, 0));
  EXPECT_EQ(p, nullptr);  // cleared on failure
  EXPECT_EQ(tcclInvalidArgument, tcclMemAlloc(&p, SIZE_MAX));
  ASSERT_EQ(tcclSuccess, tcclMemAlloc(&p, 10000)) << Last();
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(0u, reinterpret_cast<uintptr_t>(p) % 4096);
  memset(p, 7, 10000);
  int local = 0;
  EXPECT_EQ(tcclInvalidArgument, tcclMemFree(&local));  // not from tcclMemAlloc: refused, nothing freed
  EXPECT_NE(Last().find("not returned by tcclMemAlloc"), std::string::npos) << Last();
  EXPECT_EQ(tcclInvalidArgument, tcclMemFree(static_cast<char*>(p) + 64));
  EXPECT_EQ(7, static_cast<unsigned char*>(p)[9999]);  // still mapped
  EXPECT_EQ(tcclSuccess, tcclMemFree(p));
  EXPECT_EQ(tcclInvalidArgument, tcclMemFree(p));  // twice
  EXPECT_EQ(tcclSuccess, tcclMemFree(nullptr));

  std::vector<char> buf(4096);
  void* h = nullptr;
  EXPECT_EQ(tcclInvalidArgument, tcclCommRegister(comms_[0], nullptr, 16, &h));
  EXPECT_EQ(tcclInvalidArgument, tcclCommRegister(comms_[0], buf.data(), 0, &h));
  EXPECT_EQ(tcclInvalidArgument, tcclCommRegister(comms_[0], buf.data(), 16, nullptr));
  EXPECT_EQ(tcclInvalidArgument, tcclCommRegister(nullptr, buf.data(), 16, &h));
  ASSERT_EQ(tcclSuccess, tcclCommRegister(comms_[0], buf.data(), buf.size(), &h)) << Last();
  EXPECT_EQ(tcclInvalidArgument, tcclCommDeregister(comms_[1], h));  // another communicator's
  EXPECT_EQ(tcclSuccess, tcclCommDeregister(comms_[0], h));
  EXPECT_EQ(tcclInvalidArgument, tcclCommDeregister(comms_[0], h));  // twice
  ExpectUsable();
}

TEST(Api, DestroyedAndAbortedCommunicators) {
  tcclComm_t c = nullptr;
  ASSERT_EQ(tcclSuccess, tcclCommInitAll(&c, 1, nullptr));
  ASSERT_EQ(tcclSuccess, tcclCommDestroy(c));
  float x = 1;
  EXPECT_REJECTED(tcclAllReduce(&x, &x, 1, tcclFloat, tcclSum, c, nullptr), tcclInvalidArgument, "not a live communicator");
  EXPECT_REJECTED(tcclCommDestroy(c), tcclInvalidArgument, "not a live communicator");
  int n = 0;
  EXPECT_REJECTED(tcclCommCount(c, &n), tcclInvalidArgument, "not a live communicator");

  ASSERT_EQ(tcclSuccess, tcclCommInitAll(&c, 1, nullptr));
  EXPECT_EQ(tcclSuccess, tcclCommAbort(c));
  EXPECT_REJECTED(tcclAllReduce(&x, &x, 1, tcclFloat, tcclSum, c, nullptr), tcclInvalidArgument, "not a live communicator");
  EXPECT_REJECTED(tcclAllReduce(&x, &x, 1, tcclFloat, tcclSum, nullptr, nullptr), tcclInvalidArgument, "comm is NULL");
  EXPECT_EQ(tcclSuccess, tcclCommDestroy(nullptr));
}

// The sockets this process has open. Counted, not compared by name: a new socket can reuse a
// number with a new inode.
int OpenSockets() {
  int n = 0;
  if (DIR* d = opendir("/proc/self/fd")) {
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] == '.' || atoi(e->d_name) == dirfd(d)) continue;  // not the listing itself
      char target[256] = {0};
      std::string path = std::string("/proc/self/fd/") + e->d_name;
      if (readlink(path.c_str(), target, sizeof(target) - 1) > 0 && strncmp(target, "socket:", 7) == 0) ++n;
    }
    closedir(d);
  }
  return n;
}

// Collectives look their handle up in a per-thread cache (src/api/handles.cc). A communicator
// destroyed by another thread must be rejected by a thread whose cache still names it, and the
// cache must not keep it alive: its file descriptors (TCP listener, ...) close at the destroy,
// while the thread that used it is still running.
TEST(Api, DestroyOnAnotherThreadReachesACachedLookup) {
  tcclComm_t c = nullptr;
  // The first communicator of a process also opens what lives to exit (the log, ...).
  ASSERT_EQ(tcclSuccess, tcclCommInitAll(&c, 1, nullptr)) << Last();
  ASSERT_EQ(tcclSuccess, tcclCommDestroy(c));
  const int socketsBefore = OpenSockets();
  ASSERT_EQ(tcclSuccess, tcclCommInitAll(&c, 1, nullptr)) << Last();
  ASSERT_GT(OpenSockets(), socketsBefore);  // else this test could not see a kept-alive communicator
  std::mutex mu;
  std::condition_variable cv;
  int phase = 0;  // 1: the user cached its lookup; 2: destroyed; 3: the user is done
  tcclResult_t first = tcclInternalError, afterDestroy = tcclSuccess;
  std::string afterMessage;
  int socketsWhileUserLives = -1;
  std::thread user([&] {
    float x = 1;
    first = tcclAllReduce(&x, &x, 1, tcclFloat, tcclSum, c, nullptr);
    std::unique_lock<std::mutex> l(mu);
    phase = 1;
    cv.notify_all();
    cv.wait(l, [&] { return phase == 2; });
    afterDestroy = tcclAllReduce(&x, &x, 1, tcclFloat, tcclSum, c, nullptr);
    afterMessage = Last();
    phase = 3;
    cv.notify_all();
  });
  {
    std::unique_lock<std::mutex> l(mu);
    cv.wait(l, [&] { return phase == 1; });
    EXPECT_EQ(tcclSuccess, tcclCommDestroy(c));
    // Counted while the user thread is alive and its cache names c. The bootstrap store of
    // tcclCommInitAll serves on its own thread and closes its side of the connections when it sees
    // them close, a few milliseconds later: wait for that, not forever.
    for (int i = 0; i < 200 && (socketsWhileUserLives = OpenSockets()) > socketsBefore; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    phase = 2;
    cv.notify_all();
    cv.wait(l, [&] { return phase == 3; });
  }
  user.join();
  EXPECT_EQ(tcclSuccess, first);
  EXPECT_EQ(tcclInvalidArgument, afterDestroy);
  EXPECT_NE(afterMessage.find("not a live communicator"), std::string::npos) << afterMessage;
  EXPECT_LE(socketsWhileUserLives, socketsBefore) << "a destroyed communicator was kept alive by a cached lookup";

  // A new communicator (its handle may reuse the old address) is found, not the cached old one.
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(tcclSuccess, tcclCommInitAll(&c, 1, nullptr)) << Last();
    int v = 5;
    EXPECT_EQ(tcclSuccess, tcclAllReduce(&v, &v, 1, tcclInt32, tcclSum, c, nullptr)) << Last();
    EXPECT_EQ(5, v);
    EXPECT_EQ(tcclSuccess, tcclCommDestroy(c));
  }
}

TEST(Api, InitArguments) {
  tcclComm_t c = nullptr;
  tcclUniqueId id;
  ASSERT_EQ(tcclSuccess, tcclGetUniqueId(&id));
  EXPECT_REJECTED(tcclCommInitRank(&c, 0, id, 0), tcclInvalidArgument, "nranks");
  EXPECT_REJECTED(tcclCommInitRank(&c, 2, id, 2), tcclInvalidArgument, "rank 2 is outside");
  EXPECT_REJECTED(tcclCommInitRank(nullptr, 1, id, 0), tcclInvalidArgument, "comm is NULL");
  tcclUniqueId zero;
  memset(&zero, 0, sizeof(zero));
  EXPECT_REJECTED(tcclCommInitRank(&c, 1, zero, 0), tcclInvalidArgument, "unique id");
  const int badDevices[2] = {0, -7};
  EXPECT_REJECTED(tcclCommInitAll(&c, 2, badDevices), tcclInvalidArgument, "devlist[1]");
  EXPECT_REJECTED(tcclGetUniqueId(nullptr), tcclInvalidArgument, "NULL");
  EXPECT_REJECTED(tcclGroupEnd(), tcclInvalidUsage, "without a matching");
}

// A parameter out of its range fails the communicator's creation with its name and value. A
// negative ring size used to reach the shared segment's layout and crash the process.
TEST(Api, ParametersOutsideTheirRangesAreClearErrors) {
  tcclComm_t c[2] = {nullptr, nullptr};
  {
    tccl_test::ScopedEnv restart("TCCL_SHM_RING_RESTART", "2");
    EXPECT_REJECTED(tcclCommInitAll(c, 2, nullptr), tcclInvalidArgument, "TCCL_SHM_RING_RESTART='2' (environment) is outside -1 .. 1");
  }
  {
    tccl_test::ScopedEnv ring("TCCL_SHM_RING_BYTES", "-1");
    EXPECT_REJECTED(tcclCommInitAll(c, 2, nullptr), tcclInvalidArgument, "TCCL_SHM_RING_BYTES='-1' (environment) is outside 4096 ..");
  }
  {
    tccl_test::ScopedEnv shmOff("TCCL_SHM_DISABLE", "ture");
    EXPECT_REJECTED(tcclCommInitAll(c, 2, nullptr), tcclInvalidArgument, "TCCL_SHM_DISABLE='ture' (environment) is not a boolean");
  }
  EXPECT_EQ(c[0], nullptr);
  EXPECT_EQ(c[1], nullptr);
}

// Ranks 0..2 join a communicator of 3 whose rank 1 has a config it refuses; rank 2 starts with the
// others (lateSec 0) or lateSec after they have returned. Ranks 0 and 2 must fail at once, naming
// rank 1 and why, instead of waiting until TCCL_TIMEOUT (30 s here).
void ExpectTheRefusalReachesTheOthersAtOnce(double lateSec) {
  tccl_test::ScopedEnv timeout("TCCL_TIMEOUT", "30");
  tcclUniqueId id;
  ASSERT_EQ(tcclSuccess, tcclGetUniqueId(&id));
  tcclComm_t c[3] = {nullptr, nullptr, nullptr};
  tcclResult_t rc[3];
  std::string err[3];
  double took[3];
  auto join = [&](int r) {
    const auto t0 = std::chrono::steady_clock::now();
    tcclConfig_t cfg = TCCL_CONFIG_INITIALIZER;
    if (r == 1) cfg.determinism = 7;
    rc[r] = tcclCommInitRankConfig(&c[r], 3, id, r, &cfg);
    err[r] = Last();
    took[r] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  std::vector<std::thread> t;
  for (int r = 0; r < (lateSec > 0 ? 2 : 3); ++r) t.emplace_back(join, r);
  for (auto& x : t) x.join();
  if (lateSec > 0) {
    std::this_thread::sleep_for(std::chrono::duration<double>(lateSec));
    join(2);
  }
  EXPECT_EQ(rc[1], tcclInvalidArgument);
  for (int r : {0, 2}) {
    EXPECT_EQ(rc[r], tcclRemoteError) << err[r];
    EXPECT_NE(err[r].find("rank 1 of 3 (host "), std::string::npos) << err[r];
    EXPECT_NE(err[r].find("could not join: config determinism 7 is not a tcclDeterminism_t"), std::string::npos) << err[r];
    EXPECT_LT(took[r], 10.0);
  }
  for (tcclComm_t x : c) EXPECT_EQ(x, nullptr);
}

// A rank that cannot join (here its config is refused) abandons the bootstrap, so the others fail
// at once naming it and why.
TEST(Api, ARankThatCannotJoinFailsTheOthersAtOnce) { ExpectTheRefusalReachesTheOthersAtOnce(0); }

// The same with the last rank starting only after the other two have returned (and the store has
// checked its clients, once a second): the root's store stays up for it (store_server.cc,
// Lingering). Before, it found the store gone and was refused for 30 s (seen in CI under ASan).
TEST(Api, ARankStartingAfterTheOthersFailedStillLearnsWhyAtOnce) { ExpectTheRefusalReachesTheOthersAtOnce(1.5); }

// Ranks that disagree on the communicator's size: the rank that sees it first abandons, so the
// rank waiting for a third rank that will never come fails at once too.
TEST(Api, RanksDisagreeingOnTheirCountFailAtOnce) {
  tccl_test::ScopedEnv timeout("TCCL_TIMEOUT", "30");
  tcclUniqueId id;
  ASSERT_EQ(tcclSuccess, tcclGetUniqueId(&id));
  tcclComm_t c[2] = {nullptr, nullptr};
  tcclResult_t rc[2];
  std::string err[2];
  const auto t0 = std::chrono::steady_clock::now();
  std::thread a([&] { rc[0] = tcclCommInitRank(&c[0], 2, id, 0); err[0] = Last(); });
  std::thread b([&] { rc[1] = tcclCommInitRank(&c[1], 3, id, 1); err[1] = Last(); });
  a.join();
  b.join();
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10.0);
  EXPECT_NE(rc[0], tcclSuccess);
  EXPECT_NE(rc[1], tcclSuccess);
  EXPECT_NE(err[0].find("nranks=3 but this rank has nranks=2"), std::string::npos) << err[0];
  EXPECT_NE(err[1].find("could not join"), std::string::npos) << err[1];
  EXPECT_NE(err[1].find("nranks=3 but this rank has nranks=2"), std::string::npos) << err[1];
}

// An address that does not resolve is an error, not a silent fallback to another interface
// (other hosts would be told an address the user did not ask for). ".invalid" never resolves.
TEST(Api, UnresolvableSocketAddressIsAClearError) {
  tccl_test::ScopedEnv addr("TCCL_SOCKET_ADDR", "no-such-host.invalid");
  tcclUniqueId id;
  EXPECT_REJECTED(tcclGetUniqueId(&id), tcclInvalidArgument, "TCCL_SOCKET_ADDR='no-such-host.invalid': cannot resolve");
}

TEST(Api, ErrorStringsAndVersion) {
  for (int r = 0; r < tcclNumResults; ++r) EXPECT_GT(strlen(tcclGetErrorString((tcclResult_t)r)), 5u);
  // A C caller may pass any int (CI's UBSan run reads this).
  EXPECT_STREQ(tcclGetErrorString((tcclResult_t)-7), "unknown result code");
  EXPECT_STREQ(tcclGetErrorString((tcclResult_t)99), "unknown result code");
  int v = 0;
  EXPECT_EQ(tcclSuccess, tcclGetVersion(&v));
  EXPECT_EQ(v, TCCL_VERSION_CODE);
  EXPECT_EQ(tcclGetVersion(nullptr), tcclInvalidArgument);
}

TEST(Api, ReduceReferenceArguments) {
  float a = 1, b = 2, out = 0;
  const void* in[2] = {&a, &b};
  EXPECT_EQ(tcclSuccess, tcclReduceReference(in, 2, &out, 1, tcclFloat, tcclSum));
  EXPECT_EQ(out, 3.0f);
  EXPECT_EQ(tcclSuccess, tcclReduceReference(in, 2, &out, 1, tcclFloat, tcclAvg));
  EXPECT_EQ(out, 1.5f);
  EXPECT_REJECTED(tcclReduceReference(in, 0, &out, 1, tcclFloat, tcclSum), tcclInvalidArgument, "nranks");
  const void* withNull[2] = {&a, nullptr};
  EXPECT_REJECTED(tcclReduceReference(withNull, 2, &out, 1, tcclFloat, tcclSum), tcclInvalidArgument, "inputs[1]");
  EXPECT_REJECTED(tcclReduceReference(in, 2, &out, 1, (tcclDataType_t)42, tcclSum), tcclInvalidArgument, "datatype");
}

TEST(Api, SplitColorsAndNoColor) {
  const int n = 4;
  tcclComm_t comms[n], sub[n];
  ASSERT_EQ(tcclSuccess, tcclCommInitAll(comms, n, nullptr));
  std::thread t[n];
  tcclResult_t rc[n];
  for (int r = 0; r < n; ++r)
    t[r] = std::thread([&, r] { rc[r] = tcclCommSplit(comms[r], r == 3 ? TCCL_SPLIT_NOCOLOR : r % 2, -r, &sub[r], nullptr); });
  for (auto& x : t) x.join();
  for (int r = 0; r < n; ++r) ASSERT_EQ(rc[r], tcclSuccess) << Last();
  EXPECT_EQ(sub[3], nullptr);
  int rank = -1, count = 0;
  tcclCommCount(sub[0], &count);
  EXPECT_EQ(count, 2);  // ranks 0 and 2
  tcclCommUserRank(sub[0], &rank);
  EXPECT_EQ(rank, 1);  // key -0 > key -2: rank 2 comes first
  tcclCommCount(sub[1], &count);
  EXPECT_EQ(count, 1);
  EXPECT_REJECTED(tcclCommSplit(comms[0], -5, 0, &sub[3], nullptr), tcclInvalidArgument, "color -5");
  for (int r = 0; r < n; ++r) {
    if (sub[r]) tcclCommDestroy(sub[r]);
    tcclCommDestroy(comms[r]);
  }
}

}  // namespace
