// Ranks as threads in one process: the full sweep for N in {1,2,3,4,5,7,8} over shared memory,
// each algorithm forced in turn, and a smaller sweep over TCP (shared memory disabled).
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <thread>

#include "algorithms/registry.h"
#include "comm/communicator.h"
#include "config/params.h"
#include "exec/executor.h"
#include "exec/waiter.h"
#include "topology/cache_size.h"
#include "topology/host_id.h"
#include "transports/shm/shm_transport.h"
#include "transports/shm/single_copy.h"
#include "tests/support/forced_algorithm.h"
#include "tests/support/process_ranks.h"
#include "tests/support/scoped_env.h"
#include "tests/support/sweep.h"
#include "tuning/cost_model.h"

namespace tccl_test {
namespace {

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

// Strict determinism is the default: every reduction, float included, must equal
// tcclReduceReference bit for bit.
TEST_P(ThreadRanks, AutomaticSelectionStrict) {
  SweepOptions opt;
  opt.expectCanonical = true;
  RunOnThreads(GetParam(), opt);
}

TEST_P(ThreadRanks, HostStreamsStrict) {
  SweepOptions opt;
  opt.expectCanonical = true;
  opt.useStream = true;
  opt.types = {tcclFloat32, tcclFloat16, tcclInt32};
  RunOnThreads(GetParam(), opt);
}

// The run level admits the non-canonical ring and chain algorithms: correct within rounding and
// repeatable, exact for integers, max and min.
TEST_P(ThreadRanks, RunLevelRingAndChain) {
  ScopedEnv det("TCCL_DETERMINISM", "run");
  ScopedEnv algo("TCCL_ALGO", "allreduce:ring;reducescatter:ring;reduce:chain");
  SweepOptions opt;
  opt.colls = {"all_reduce", "reduce_scatter", "reduce"};
  RunOnThreads(GetParam(), opt);
}

// Each canonical algorithm forced for every size, with default and with tiny slices.
TEST_P(ThreadRanks, ForcedCanonicalAlgorithms) {
  for (const char* chunk : {"131072", "64"}) {
    ScopedEnv c("TCCL_CHUNK_BYTES", chunk);
    ScopedEnv algo("TCCL_ALGO", "allreduce:twoshot;reducescatter:direct;reduce:direct");
    SweepOptions opt;
    opt.colls = {"all_reduce", "reduce_scatter", "reduce"};
    opt.expectCanonical = true;
    opt.types = {tcclFloat32, tcclFloat16, tcclBfloat16, tcclFloat64};
    opt.largeCounts = {100003};
    // Under the sanitizers 64 Ki elements in 64-byte slices took 111 s at 7 ranks and 140 s at 8
    // (ASan, about a third of the ASan thread-rank run); as in TinySlicesAndRings, 10007 elements
    // are still hundreds of slices per call.
    if (std::string(chunk) == "64") opt.quickLargeCount = 10007;
    RunOnThreads(GetParam(), opt);
  }
}

// Every algorithm of the table forced alone (run level, so the non-canonical ones are admitted
// too): correct for every op, in and out of place and with ranks mixing the two, and canonical ones
// bit for bit.
TEST_P(ThreadRanks, EveryAlgorithmForced) {
  ScopedEnv det("TCCL_DETERMINISM", "run");
  for (const tccl::AlgorithmInfo& alg : tccl::AllAlgorithms()) {
    ScopedEnv algo("TCCL_ALGO", ForcedAlgorithm(alg).c_str());
    SweepOptions opt;
    opt.colls = {tccl::CollName(alg.coll)};
    opt.types = {tcclFloat32, tcclBfloat16, tcclInt8, tcclFloat64};
    // Under the sanitizers one 4-byte and one 1-byte type (with four, 35 and 44 s of ASan at 7 and
    // 8 ranks, its largest test there); 2- and 8-byte elements stay in the automatic and canonical
    // sweeps there.
    if (QuickSweep()) opt.types = {tcclFloat32, tcclInt8};
    opt.largeCounts = {100003};
    opt.expectCanonical = alg.canonicalOrder;
    opt.mixInPlace = true;
    SCOPED_TRACE(ForcedAlgorithm(alg));
    RunOnThreads(GetParam(), opt);
  }
}

TEST_P(ThreadRanks, ForcedDirectAllReduceIsCanonical) {
  ScopedEnv algo("TCCL_ALGO", "allreduce:direct");
  SweepOptions opt;
  opt.colls = {"all_reduce"};
  opt.expectCanonical = true;
  RunOnThreads(GetParam(), opt);
}

// The 2-rank direct all-reduce goes in 1 MiB pieces (algorithms/direct.cc): several pieces, the
// last one short, with even ranks in place (through two scratch slots) and odd ones out of place,
// from buffers the peer reads in one copy and from plain ones.
TEST(TwoThreadRanks, DirectAllReduceInPiecesMixingInPlace) {
  ScopedEnv algo("TCCL_ALGO", "allreduce:direct");
  for (HostBuffers buffers : {HostBuffers::MemAlloc, HostBuffers::Plain}) {
    SweepOptions opt;
    opt.colls = {"all_reduce"};
    opt.types = {tcclFloat32};
    opt.largeCounts = {3 * (1 << 20) / 4 + 5};
    opt.largeTypes = {tcclFloat32};
    opt.quickLargeCount = opt.largeCounts[0];
    opt.expectCanonical = true;
    opt.mixInPlace = true;
    opt.buffers = buffers;
    RunOnThreads(2, opt);
  }
}

// Small slices: many pipeline steps per call, and ring-buffer wrap-around on every message.
TEST_P(ThreadRanks, TinySlicesAndRings) {
  ScopedEnv chunk("TCCL_CHUNK_BYTES", "64");
  ScopedEnv ring("TCCL_SHM_RING_BYTES", "4096");
  SweepOptions opt;
  opt.types = {tcclFloat32, tcclFloat16, tcclInt8, tcclFloat64};
  opt.largeCounts = {100003};
  opt.largeTypes = {tcclFloat32};
  // Under the sanitizers 64 Ki elements in 64-byte slices took 78 s at 7 ranks and 120 s at 8
  // (ASan, a sixth of the whole CI run); 10007 floats (40 KiB) are still hundreds of slices per
  // call, and messages that wrap around the 4 KiB ring.
  opt.quickLargeCount = 10007;
  RunOnThreads(GetParam(), opt);
}

// Messages of a few KiB through 16 KiB rings, restarts on: a message that finds its ring empty
// starts over at the ring's start (transports/shm/shm_channel.h) where it fits before the last
// message's start; the others go on after the last message. Both ends must agree on every
// message's place.
TEST_P(ThreadRanks, RingMessagesStartOverWhereTheRingIsEmpty) {
  ScopedEnv ring("TCCL_SHM_RING_BYTES", "16384");
  ScopedEnv restart("TCCL_SHM_RING_RESTART", "1");
  ScopedEnv noSingleCopy("TCCL_SHM_SINGLE_COPY_BYTES", "0");
  const uint64_t before = tccl::RingRestarts();
  SweepOptions opt;
  opt.types = {tcclFloat32, tcclFloat64, tcclInt8, tcclBfloat16};
  opt.counts = {1, 1009, 3001};
  opt.largeCounts = {20011};
  opt.quickLargeCount = 20011;
  RunOnThreads(GetParam(), opt);
  if (GetParam() > 1) {
    EXPECT_GT(tccl::RingRestarts(), before);
  }
}

// Receives into their final place store past the cache where the operation's buffers on the host
// outgrow it (ShmOperation::streamOutputs): at 2 ranks the two-shot's gathered half, the direct
// all-reduce's reduced pieces out of place, the ring all-gather's last round, the chain's or
// direct broadcast's and the all-to-all's receives, the direct reduce's and reduce-scatter's
// reduced slices, through the rings (single copy off) and read in one copy, at sizes whose
// buffers outgrow the last-level cache (take more than half of it: OutgrowsLastLevelCache),
// exact on unaligned buffers; none at a size whose buffers fit, nor in place for the reduce's
// and reduce-scatter's reduced slices. So do the local copies into a final place
// (ExecKernels::streamFinalCopies): out of place, the all-gather's and all-to-all's own block and
// the broadcast root's message.
TEST(ThreadRanksStreaming, FinalReceivesStreamWhereTheBuffersOutgrowTheCache) {
  const size_t llc = tccl::LastLevelCacheBytes();
  if (llc == 0 || llc > ((size_t)64 << 20)) GTEST_SKIP() << "last-level cache unknown or above 64 MiB: " << llc;
  struct Case {
    const char* algo;
    const char* coll;
    bool copies;            // copies locally into a final place out of place
    bool reducesIntoOutput;  // its final receives reduce into the output (the own operand in place)
  };
  const Case cases[] = {{"allreduce:twoshot", "all_reduce", false, false},
                        {"allreduce:direct", "all_reduce", false, false},
                        {"", "all_gather", true, false},
                        {"", "broadcast", true, false},
                        {"", "alltoall", true, false},
                        {"reduce:direct", "reduce", false, true},
                        {"reducescatter:direct", "reduce_scatter", false, true}};
  for (const char* singleCopy : {"0", "262144"})
  for (const Case& k : cases) {
    const char* coll = k.coll;
    ScopedEnv algo("TCCL_ALGO", k.algo);
    ScopedEnv sc("TCCL_SHM_SINGLE_COPY_BYTES", singleCopy);
    SCOPED_TRACE(std::string(coll) + " " + k.algo + ", TCCL_SHM_SINGLE_COPY_BYTES=" + singleCopy);
    auto sweep = [&](size_t count, bool inPlaceOnly = false) {
      SweepOptions opt;
      opt.inPlaceOnly = inPlaceOnly;
      opt.colls = {coll};
      opt.types = opt.largeTypes = {tcclFloat32};
      opt.counts = {};
      opt.largeCounts = {count};
      opt.quickLargeCount = count;
      opt.expectCanonical = true;
      RunOnThreads(2, opt);
    };
    uint64_t before = tccl::StreamedReceiveBytes(), copiedBefore = tccl::StreamedCopyBytes();
    // The rule counts each rank's send and receive buffers (BufferBytes) times the host's ranks:
    // from 4 to 8 times the count's bytes here.
    sweep(llc / 16 / sizeof(float));  // 2 ranks' buffers: at most llc / 2, not above it
    EXPECT_EQ(tccl::StreamedReceiveBytes(), before);
    EXPECT_EQ(tccl::StreamedCopyBytes(), copiedBefore);
    // Above half the cache but below the whole for most (3/4 llc or more). Not the broadcast's
    // receives: a rank other than the root counts its buffers as in place (its send buffer is
    // unused: api_coll.cc), 3/8 llc here; its root's copy streams.
    before = tccl::StreamedReceiveBytes();
    sweep(3 * llc / 16 / sizeof(float));
    if (std::string(coll) != "broadcast") {
      EXPECT_GT(tccl::StreamedReceiveBytes(), before);
    }
    if (k.copies) {
      EXPECT_GT(tccl::StreamedCopyBytes(), copiedBefore);
    }
    const size_t large = (llc / 2 + ((size_t)1 << 20)) / sizeof(float);  // 2 ranks' buffers: above 2 llc
    before = tccl::StreamedReceiveBytes();
    sweep(large);
    EXPECT_GT(tccl::StreamedReceiveBytes(), before);
    if (k.reducesIntoOutput) {
      // In place the reduce has just read each output line as its own operand: stored through
      // the cache (FinalReduceOutput, algorithms/ops.cc).
      before = tccl::StreamedReceiveBytes();
      sweep(large, /*inPlaceOnly=*/true);
      EXPECT_EQ(tccl::StreamedReceiveBytes(), before);
    }
  }
}

// At 2 ranks the two-shot's gather sends each reduced piece as the receive-and-reduce makes it
// (Op::forwardTo), where the operation's buffers outgrow the cache: the results stay canonical in
// and out of place, with the ranks mixing the two, on unaligned buffers, and bytes are forwarded;
// none where the buffers fit. Float32 sum and the exact types (the sweep's large counts).
TEST(ThreadRanksStreaming, TheTwoShotForwardsItsReducedHalfWhereTheBuffersOutgrowTheCache) {
  const size_t llc = tccl::LastLevelCacheBytes();
  if (llc == 0 || llc > ((size_t)64 << 20)) GTEST_SKIP() << "last-level cache unknown or above 64 MiB: " << llc;
  ScopedEnv algo("TCCL_ALGO", "allreduce:twoshot");
  // Through the rings, as between processes with plain buffers: threads read each other's buffers
  // in one copy, and there the two-shot cuts slices of the single-copy threshold, which are read
  // rather than forwarded (DirectSliceCount, algorithms/direct_shot.cc).
  ScopedEnv noSingleCopy("TCCL_SHM_SINGLE_COPY_BYTES", "0");
  auto sweep = [&](size_t count) {
    SweepOptions opt;
    opt.colls = {"all_reduce"};
    opt.types = {tcclFloat32};
    opt.largeTypes = {tcclFloat32, tcclInt32, tcclBfloat16};
    opt.counts = {};
    opt.largeCounts = {count};
    opt.quickLargeCount = count;
    opt.expectCanonical = true;
    opt.mixInPlace = true;
    RunOnThreads(2, opt);
  };
  uint64_t before = tccl::ForwardedBytes();
  sweep(llc / 16 / sizeof(float));  // 2 ranks' buffers: at most llc / 2
  EXPECT_EQ(tccl::ForwardedBytes(), before);
  const size_t large = (llc / 2 + ((size_t)1 << 20)) / sizeof(float);
  before = tccl::ForwardedBytes();
  sweep(large);
  // Each rank's half of every large call, but for pieces the ring had no room for.
  EXPECT_GT(tccl::ForwardedBytes(), before + large * sizeof(float));
  // Windows of 3001 bytes (taken in whole elements), none at every third
  // call: each reduce forwards in short pieces, and those that find no window receive the rest of
  // the slice into its place, from which the send sends it once the reduce is done.
  tccl::LimitSendWindowsForTests(3001, 3);
  before = tccl::ForwardedBytes();
  sweep(large);
  tccl::LimitSendWindowsForTests(0, 0);
  EXPECT_GT(tccl::ForwardedBytes(), before);
  // Windows written with streaming stores, as while the ring's copy-in streams (the VM's slow
  // spells): each piece reduced into a bounce buffer and streamed into the ring and the output,
  // fenced before the head moves, read by the peer's thread.
  tccl::StreamSendWindowsForTests(true);
  before = tccl::ForwardedBytes();
  sweep(large);
  tccl::StreamSendWindowsForTests(false);
  EXPECT_GT(tccl::ForwardedBytes(), before + large * sizeof(float));
  // Slices of 32 KiB in 192 KiB rings, which hold the five slices that can be in flight with
  // little to spare: the window is sometimes short or gone, and the rest of a slice is received
  // into its place and sent from there. And 128 KiB slices in those rings, which do not hold five:
  // the layout that forwards is not used (TwoShotAllReduce), nothing is forwarded.
  ScopedEnv ring("TCCL_SHM_RING_BYTES", "196608");
  {
    ScopedEnv slices("TCCL_CHUNK_BYTES", "32768");
    before = tccl::ForwardedBytes();
    sweep(large);
    EXPECT_GT(tccl::ForwardedBytes(), before);
  }
  before = tccl::ForwardedBytes();
  sweep(large);
  EXPECT_EQ(tccl::ForwardedBytes(), before);
}

// Single copy between threads (transports/shm/single_copy.h): with the threshold just above the
// LL protocol's largest message, almost every message is read straight from the sender's buffer,
// under every algorithm of the table (the simulator proves none deadlocks when sends wait for
// their receiver; this runs them), in and out of place, unaligned, and through a small ring.
TEST_P(ThreadRanks, SingleCopyEveryAlgorithm) {
  ScopedEnv det("TCCL_DETERMINISM", "run");
  ScopedEnv single("TCCL_SHM_SINGLE_COPY_BYTES", "1100");
  ScopedEnv ring("TCCL_SHM_RING_BYTES", "8192");
  const uint64_t before = tccl::SingleCopyMessages(tccl::CopyMode::Pointer);
  for (const tccl::AlgorithmInfo& alg : tccl::AllAlgorithms()) {
    std::string coll = tccl::CollName(alg.coll), key;
    for (char ch : coll)
      if (ch != '_') key += ch;
    ScopedEnv algo("TCCL_ALGO", (key + ":" + alg.name).c_str());
    SweepOptions opt;
    opt.colls = {coll};
    opt.types = {tcclFloat32, tcclInt8, tcclFloat64};
    opt.largeCounts = {100003};
    opt.largeTypes = {tcclFloat32};
    opt.expectCanonical = alg.canonicalOrder;
    SCOPED_TRACE(key + ":" + alg.name);
    RunOnThreads(GetParam(), opt);
  }
  if (GetParam() > 1) {
    EXPECT_GT(tccl::SingleCopyMessages(tccl::CopyMode::Pointer), before);
  }
}

// Named by rank count (N/ThreadRanks.X/7 is 7 ranks), so that filters can name rank counts.
INSTANTIATE_TEST_SUITE_P(N, ThreadRanks, ::testing::Values(1, 2, 3, 4, 5, 7, 8), ::testing::PrintToStringParamName());

class TcpThreadRanks : public ::testing::TestWithParam<int> {};

TEST_P(TcpThreadRanks, SweepOverLoopbackTcp) {
  ScopedEnv shm("TCCL_SHM_DISABLE", "1");
  SweepOptions opt;
  opt.expectCanonical = true;
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
  opt.expectCanonical = true;
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

// The determinism contract in one test: N fixed order-sensitive inputs (many binades, cancellation,
// subnormals, signed zeros) placed at different offsets of buffers of different lengths, reduced
// with each algorithm forced in turn, give the same bits, equal to tcclReduceReference.
class StrictOffsets : public ::testing::TestWithParam<int> {};

TEST_P(StrictOffsets, SameElementAnyOffsetAnySizeAnyAlgorithm) {
  const int n = GetParam();
  const float special[] = {1e30f, -1e30f, 1.0f, 3e-39f /* subnormal */, -0.0f, 0.0f, 7e-8f, -2.5f};
  std::vector<float> element(n);
  for (int r = 0; r < n; ++r) element[r] = special[(r * 5 + 3) % 8] * (r % 3 == 2 ? 1.5f : 1.0f);
  std::vector<const void*> ptrs(n);
  for (int r = 0; r < n; ++r) ptrs[r] = &element[r];
  float want = 0;
  ASSERT_EQ(tcclSuccess, tcclReduceReference(ptrs.data(), n, &want, 1, tcclFloat32, tcclSum));
  const char* algos[] = {"", "allreduce:direct", "allreduce:twoshot"};
  const size_t lengths[] = {1, 5, 4097, 70001, 300007};
  for (const char* algo : algos) {
    ScopedEnv a("TCCL_ALGO", algo);
    std::vector<tcclComm_t> comms(n);
    ASSERT_EQ(tcclSuccess, tcclCommInitAll(comms.data(), n, nullptr));
    for (size_t len : lengths) {
      size_t offset = (len * 7) / 11;
      std::vector<std::vector<float>> bufs(n, std::vector<float>(len));
      std::vector<float> got(n);
      std::vector<std::thread> threads;
      for (int r = 0; r < n; ++r)
        threads.emplace_back([&, r] {
          for (size_t i = 0; i < len; ++i) bufs[r][i] = (float)((i * 31 + r * 17) % 97) - 48.5f;
          bufs[r][offset] = element[r];
          EXPECT_EQ(tcclSuccess, tcclAllReduce(bufs[r].data(), bufs[r].data(), len, tcclFloat32, tcclSum, comms[r], nullptr));
          got[r] = bufs[r][offset];
        });
      for (auto& t : threads) t.join();
      for (int r = 0; r < n; ++r)
        EXPECT_EQ(0, memcmp(&got[r], &want, 4)) << "algo '" << algo << "' length " << len << " rank " << r << ": got "
                                                << got[r] << " want " << want;
    }
    for (tcclComm_t c : comms) tcclCommDestroy(c);
  }
}

INSTANTIATE_TEST_SUITE_P(N, StrictOffsets, ::testing::Values(2, 3, 4, 5, 7, 8));

// The communicator tells the cost model which messages travel as LL lines
// (CollArgs::lineMessageBytes): its choice for an 8-rank 4 KiB all-reduce (the two-shot's blocks
// are 512 B) is the model's with lines free. Skipped where lines do not change the choice (a core
// per rank: the ring-message term applies only where ranks share cores).
TEST(EightThreadRanks, SelectionKnowsWhichMessagesTravelAsLines) {
  const int n = 8;
  const size_t count = 1024;
  tccl::CollArgs a;
  a.kind = tccl::CollKind::AllReduce;
  a.nranks = n;
  a.count = count;
  a.elemSize = 4;
  a.requireCanonical = true;
  a.sliceElems = (size_t)tccl::ParamInt("CHUNK_BYTES") / 4;
  // Ranks as threads map each other's memory: shared scratch from the host's threshold.
  a.sharedScratchBytes = HostSingleCopyBytesHere(n);
  tccl::CostContext ctx;
  ctx.machine = tccl::LoadOrMeasureMachine();
  ctx.host.localRanks = n;
  ctx.host.cores = tccl::UsableCores();
  auto pick = [&](size_t lineMessageBytes) {
    a.lineMessageBytes = lineMessageBytes;
    const tccl::AlgorithmInfo* alg = nullptr;
    EXPECT_TRUE(tccl::SelectAlgorithm(a, tccl::AlgoFilter{}, ctx, &alg).ok());
    return std::string(alg ? alg->name : "none");
  };
  const std::string withLines = pick(tccl::kLineMessagePayloadBytes), everyMessage = pick(0);
  if (withLines == everyMessage) GTEST_SKIP() << "both ways " << withLines << " on " << ctx.host.cores << " cores";

  std::vector<tcclComm_t> comms(n);
  ASSERT_EQ(tcclSuccess, tcclCommInitAll(comms.data(), n, nullptr)) << tcclGetLastError(nullptr);
  std::vector<std::thread> threads;
  std::vector<tcclResult_t> rc(n, tcclInternalError);
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&, r] {
      std::vector<float> x(count, 1.0f);
      rc[r] = tcclAllReduce(x.data(), x.data(), count, tcclFloat32, tcclSum, comms[r], nullptr);
    });
  for (auto& t : threads) t.join();
  for (int r = 0; r < n; ++r) EXPECT_EQ(rc[r], tcclSuccess) << "rank " << r;
  char dump[4096];
  ASSERT_EQ(tcclSuccess, tcclCommDumpFlightRecorder(comms[0], dump, sizeof(dump)));
  EXPECT_NE(std::string(dump).find("all_reduce 1024 x float algo " + withLines + " "), std::string::npos)
      << "expected " << withLines << " (with every message counted: " << everyMessage << ")\n" << dump;
  for (tcclComm_t c : comms) EXPECT_EQ(tcclSuccess, tcclCommDestroy(c));
}

TEST(StrictMode, ForcingANonCanonicalAlgorithmIsAClearError) {
  ScopedEnv algo("TCCL_ALGO", "allreduce:ring");
  tcclComm_t comms[2];
  ASSERT_EQ(tcclSuccess, tcclCommInitAll(comms, 2, nullptr));
  std::vector<float> f(100000, 1.0f);
  std::vector<int> i(100000, 1);
  // Validation happens before any communication, so one rank can check the float case alone.
  EXPECT_EQ(tcclInvalidUsage, tcclAllReduce(f.data(), f.data(), f.size(), tcclFloat32, tcclSum, comms[0], nullptr));
  EXPECT_NE(std::string(tcclGetLastError(comms[0])).find("TCCL_DETERMINISM=strict"), std::string::npos)
      << tcclGetLastError(comms[0]);
  // Integer sums are exact in any order: ring stays allowed in strict mode.
  std::thread t[2];
  tcclResult_t rc[2];
  std::vector<int> i2 = i;
  for (int r = 0; r < 2; ++r)
    t[r] = std::thread([&, r] {
      rc[r] = tcclAllReduce(r ? i2.data() : i.data(), r ? i2.data() : i.data(), i.size(), tcclInt32, tcclSum, comms[r], nullptr);
    });
  for (auto& x : t) x.join();
  EXPECT_EQ(rc[0], tcclSuccess);
  EXPECT_EQ(rc[1], tcclSuccess);
  EXPECT_EQ(i[99999], 2);
  for (tcclComm_t c : comms) tcclCommDestroy(c);
}

}  // namespace
}  // namespace tccl_test
