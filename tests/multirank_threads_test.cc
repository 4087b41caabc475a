// Ranks as threads in one process: the full sweep for N in {1,2,3,4,5,7,8} over shared memory,
// each algorithm forced in turn, and a smaller sweep over TCP (shared memory disabled).
#include <gtest/gtest.h>

#include <cstdlib>
#include <thread>

#include "config/params.h"
#include "topology/host_id.h"
#include "tests/support/sweep.h"

namespace tccl_test {
namespace {

class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    setenv(name, value, 1);
    tccl::ReloadParams();
  }
  ~ScopedEnv() {
    if (had_) setenv(name_.c_str(), old_.c_str(), 1);
    else unsetenv(name_.c_str());
    tccl::ReloadParams();
  }

 private:
  std::string name_, old_;
  bool had_ = false;
};

void RunOnThreads(int n, const SweepOptions& opt) {
  std::vector<tcclComm_t> comms(n);
  ASSERT_EQ(tcclSuccess, tcclCommInitAll(comms.data(), n, nullptr)) << tcclGetLastError(nullptr);
  std::vector<std::vector<std::string>> failures(n);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) threads.emplace_back([&, r] { failures[r] = RunSweep(comms[r], opt); });
  for (auto& t : threads) t.join();
  for (int r = 0; r < n; ++r) {
    for (size_t i = 0; i < failures[r].size() && i < 10; ++i) ADD_FAILURE() << "N=" << n << " rank " << r << ": " << failures[r][i];
    EXPECT_EQ(tcclSuccess, tcclCommDestroy(comms[r]));
  }
}

class ThreadRanks : public ::testing::TestWithParam<int> {};

TEST_P(ThreadRanks, AutomaticSelection) { RunOnThreads(GetParam(), SweepOptions()); }

TEST_P(ThreadRanks, ForcedRingAllReduce) {
  ScopedEnv algo("TCCL_ALGO", "allreduce:ring");
  SweepOptions opt;
  opt.colls = {"all_reduce"};
  RunOnThreads(GetParam(), opt);
}

TEST_P(ThreadRanks, ForcedDirectAllReduceIsCanonical) {
  ScopedEnv algo("TCCL_ALGO", "allreduce:direct");
  SweepOptions opt;
  opt.colls = {"all_reduce"};
  opt.expectCanonical = true;
  RunOnThreads(GetParam(), opt);
}

// Small slices: many pipeline steps per call, and ring-buffer wrap-around on every message.
TEST_P(ThreadRanks, TinySlicesAndRings) {
  ScopedEnv chunk("TCCL_CHUNK_BYTES", "64");
  ScopedEnv ring("TCCL_SHM_RING_BYTES", "4096");
  SweepOptions opt;
  opt.types = {tcclFloat32, tcclFloat16, tcclInt8, tcclFloat64};
  opt.largeCounts = {100003};
  opt.largeTypes = {tcclFloat32};
  RunOnThreads(GetParam(), opt);
}

INSTANTIATE_TEST_SUITE_P(N, ThreadRanks, ::testing::Values(1, 2, 3, 4, 5, 7, 8));

class TcpThreadRanks : public ::testing::TestWithParam<int> {};

TEST_P(TcpThreadRanks, SweepOverLoopbackTcp) {
  ScopedEnv shm("TCCL_SHM_DISABLE", "1");
  SweepOptions opt;
  opt.types = {tcclFloat32, tcclBfloat16, tcclInt8, tcclUint64};
  RunOnThreads(GetParam(), opt);
}

// Mixed transports: pairs of ranks share a "host" (shared memory), hosts talk TCP.
TEST_P(TcpThreadRanks, MixedShmAndTcp) {
  int n = GetParam();
  std::vector<tcclComm_t> comms(n);
  tcclUniqueId id;
  ASSERT_EQ(tcclSuccess, tcclGetUniqueId(&id));
  std::vector<std::thread> threads;
  std::vector<tcclResult_t> rcs(n);
  SweepOptions opt;
  opt.types = {tcclFloat32, tcclInt32};
  opt.largeCounts = {};
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&, r] {
      tccl::SetThreadHostIdForTest("test-host-" + std::to_string(r / 2));
      rcs[r] = tcclCommInitRank(&comms[r], n, id, r);
      tccl::SetThreadHostIdForTest("");
    });
  for (auto& t : threads) t.join();
  for (int r = 0; r < n; ++r) ASSERT_EQ(tcclSuccess, rcs[r]) << tcclGetLastError(nullptr);
  threads.clear();
  std::vector<std::vector<std::string>> failures(n);
  for (int r = 0; r < n; ++r) threads.emplace_back([&, r] { failures[r] = RunSweep(comms[r], opt); });
  for (auto& t : threads) t.join();
  for (int r = 0; r < n; ++r) {
    for (size_t i = 0; i < failures[r].size() && i < 10; ++i) ADD_FAILURE() << "rank " << r << ": " << failures[r][i];
    tcclCommDestroy(comms[r]);
  }
}

INSTANTIATE_TEST_SUITE_P(N, TcpThreadRanks, ::testing::Values(2, 3, 5));

}  // namespace
}  // namespace tccl_test
