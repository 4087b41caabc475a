// Ranks as processes: run under `tessera-run -n N` (see tests/CMakeLists.txt). Every process runs
// the same GoogleTest cases; a failure in any rank fails the job through tessera-run's exit status.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "config/params.h"
#include "comm/communicator.h"
#include "comm/registered_by_cma.h"
#include "exec/waiter.h"
#include "topology/cache_size.h"
#include "algorithms/registry.h"
#include "tests/support/forced_algorithm.h"
#include "tests/support/process_ranks.h"
#include "tests/support/scoped_env.h"
#include "tests/support/sweep.h"
#include "transports/shm/shm_transport.h"
#include "transports/shm/single_copy.h"

namespace tccl_test {
namespace {

// Strict determinism (the default) across processes: every reduction equals tcclReduceReference.
TEST_F(ProcessRanks, FullSweepStrict) {
  SweepOptions opt;
  opt.expectCanonical = true;
  std::vector<std::string> failures = RunSweep(comm_, opt);
  int rank = -1;
  tcclCommUserRank(comm_, &rank);
  for (size_t i = 0; i < failures.size() && i < 10; ++i) ADD_FAILURE() << "rank " << rank << ": " << failures[i];
}

TEST_F(ProcessRanks, SplitIntoHalvesAndRunOnEach) {
  int rank = 0, n = 1;
  tcclCommUserRank(comm_, &rank);
  tcclCommCount(comm_, &n);
  tcclComm_t half = nullptr;
  // Reverse order inside each half via the key, to check that keys order the new ranks.
  ASSERT_EQ(tcclSuccess, tcclCommSplit(comm_, rank % 2, n - rank, &half, nullptr)) << tcclGetLastError(comm_);
  ASSERT_NE(half, nullptr);
  int hr = -1, hn = 0;
  tcclCommUserRank(half, &hr);
  tcclCommCount(half, &hn);
  EXPECT_EQ(hn, (n + (rank % 2 == 0)) / 2);
  SweepOptions opt;
  opt.types = {tcclFloat32, tcclInt64};
  opt.largeCounts = {};
  opt.expectCanonical = true;
  std::vector<std::string> failures = RunSweep(half, opt);
  for (size_t i = 0; i < failures.size() && i < 10; ++i) ADD_FAILURE() << "split rank " << hr << ": " << failures[i];
  EXPECT_EQ(tcclSuccess, tcclCommDestroy(half));
}

// Single copy between processes (transports/shm/single_copy.h): tcclMemAlloc buffers are mapped
// by the receiver, registered ones read with CMA only where offered (the test hook of
// comm/registered_by_cma.h). A communicator split after lowering the threshold to just above the LL
// protocol's largest message frames nearly every message with a single-copy header. Runs the sweep
// over `colls` (empty: every collective) and returns how many messages of `mode` this rank received
// meanwhile.
uint64_t SingleCopySweep(tcclComm_t comm, HostBuffers buffers, tccl::CopyMode mode,
                         std::vector<std::string> colls = {}) {
  int rank = 0;
  tcclCommUserRank(comm, &rank);
  tcclComm_t sc = nullptr;
  {
    ScopedEnv threshold("TCCL_SHM_SINGLE_COPY_BYTES", "1100");
    EXPECT_EQ(tcclSuccess, tcclCommSplit(comm, 0, rank, &sc, nullptr)) << tcclGetLastError(comm);
  }
  if (!sc) return 0;
  const uint64_t before = tccl::SingleCopyMessages(mode);
  SweepOptions opt;
  opt.buffers = buffers;
  opt.colls = std::move(colls);
  opt.expectCanonical = true;
  opt.types = {tcclFloat32, tcclFloat16, tcclInt8, tcclFloat64};
  opt.largeCounts = {100003};
  opt.largeTypes = {tcclFloat32};
  std::vector<std::string> failures = RunSweep(sc, opt);
  for (size_t i = 0; i < failures.size() && i < 10; ++i) ADD_FAILURE() << "rank " << rank << ": " << failures[i];
  EXPECT_EQ(tcclSuccess, tcclCommDestroy(sc));
  return tccl::SingleCopyMessages(mode) - before;
}

// Every rank receives in all-gather and all-to-all (not so in broadcast and reduce), so each one
// read some messages from its peers' memory (unless a container forbids it: then nothing proves the
// path, and these fail).
TEST_F(ProcessRanks, SingleCopyFromMemAllocBuffers) {
  int n = 1;
  tcclCommCount(comm_, &n);
  const uint64_t mapped = SingleCopySweep(comm_, HostBuffers::MemAlloc, tccl::CopyMode::Mapped);
  if (n > 1) {
    EXPECT_GT(mapped, 0u) << "no message was mapped";
  }
}

// Registered buffers are not offered for CMA reads (registered_by_cma.h): every message carries
// the header and then the payload inline, through the rings. (Not the all-to-all: where the pairs'
// rings outgrow the cache it offers its own buffers, registered or not; its own tests below. Nor
// the all-gather and broadcast where exchanges go by CMA: tests/exchanges_by_cma_test.cc.)
TEST_F(ProcessRanks, RegisteredBuffersGoThroughTheRings) {
  int n = 1;
  tcclCommCount(comm_, &n);
  std::vector<std::string> colls = {"all_reduce", "reduce_scatter", "reduce"};
  if (!ExchangesByCmaHere(comm_)) colls.insert(colls.end(), {"broadcast", "all_gather"});
  const uint64_t inlineBefore = tccl::SingleCopyMessages(tccl::CopyMode::Inline);
  EXPECT_EQ(0u, SingleCopySweep(comm_, HostBuffers::Registered, tccl::CopyMode::Cma, colls));
  if (n > 1) {
    EXPECT_GT(tccl::SingleCopyMessages(tccl::CopyMode::Inline), inlineBefore);
  }
}

// Offered (the test hook), registered buffers are read with CMA, into reductions through the
// receiver's bounce buffer, with the canonical bits.
TEST_F(ProcessRanks, SingleCopyFromRegisteredBuffersWhereOffered) {
  int n = 1;
  tcclCommCount(comm_, &n);
  tccl::OfferRegisteredForTests(true);
  const uint64_t cma = SingleCopySweep(comm_, HostBuffers::Registered, tccl::CopyMode::Cma);
  const uint64_t reductions = SingleCopySweep(comm_, HostBuffers::Registered, tccl::CopyMode::Cma,
                                              {"all_reduce", "reduce_scatter", "reduce"});
  tccl::OfferRegisteredForTests(false);
  if (n > 1) {
    EXPECT_GT(cma, 0u) << "no message was read with CMA";
    EXPECT_GT(reductions, 0u) << "no reduction read a message with CMA";
  }
}

// The algorithm the flight recorder names for this communicator's latest operation.
static std::string LatestAlgorithm(tcclComm_t comm) {
  std::vector<char> text(1 << 16);
  if (tcclCommDumpFlightRecorder(comm, text.data(), text.size()) != tcclSuccess) return "?";
  const std::string s = text.data();
  const size_t at = s.rfind(" algo ");
  return at == std::string::npos ? "?" : s.substr(at + 6, s.find(' ', at + 6) - at - 6);
}

// Not read in one copy, registered buffers are priced as plain ones too
// (Communicator::SingleCopyBytesFor), so registering does not change the algorithm: at 2 ranks
// and 4 MiB, counting them as read in one copy makes the model pick the direct all-reduce (each
// rank would read its peer's whole input) where through the rings it picks the two-shot.
TEST_F(ProcessRanks, CollectivesChooseForRegisteredBuffersAsForPlainOnes) {
  int rank = 0, n = 1;
  tcclCommUserRank(comm_, &rank);
  tcclCommCount(comm_, &n);
  const size_t count = 1 << 20;  // elements of each buffer (the receive buffer of an all-gather: n times)
  const size_t block = count / n;
  for (const char* coll : {"all_reduce", "reduce_scatter", "reduce", "all_gather", "broadcast", "alltoall"}) {
    const std::string c = coll;
    std::string algo[2];
    for (HostBuffers kind : {HostBuffers::Plain, HostBuffers::Registered}) {
      std::vector<float> send(count, 1.0f + rank), recv(count, 0.0f);
      void* handles[2] = {nullptr, nullptr};
      const bool registered = kind == HostBuffers::Registered;
      if (registered) {
        ASSERT_EQ(tcclSuccess, tcclCommRegister(comm_, send.data(), count * sizeof(float), &handles[0]));
        ASSERT_EQ(tcclSuccess, tcclCommRegister(comm_, recv.data(), count * sizeof(float), &handles[1]));
      }
      tcclResult_t rc = tcclInvalidArgument;
      if (c == "all_reduce") rc = tcclAllReduce(send.data(), recv.data(), count, tcclFloat32, tcclSum, comm_, nullptr);
      if (c == "reduce_scatter") rc = tcclReduceScatter(send.data(), recv.data(), block, tcclFloat32, tcclSum, comm_, nullptr);
      if (c == "reduce") rc = tcclReduce(send.data(), recv.data(), count, tcclFloat32, tcclSum, 0, comm_, nullptr);
      if (c == "all_gather") rc = tcclAllGather(send.data(), recv.data(), block, tcclFloat32, comm_, nullptr);
      if (c == "broadcast") rc = tcclBroadcast(send.data(), recv.data(), count, tcclFloat32, 0, comm_, nullptr);
      if (c == "alltoall") rc = tcclAlltoAll(send.data(), recv.data(), block, tcclFloat32, comm_, nullptr);
      EXPECT_EQ(tcclSuccess, rc) << coll << ": " << tcclGetLastError(comm_);
      algo[registered] = LatestAlgorithm(comm_);
      for (void* h : handles) {
        if (h) {
          EXPECT_EQ(tcclSuccess, tcclCommDeregister(comm_, h));
        }
      }
    }
    EXPECT_EQ(algo[0], algo[1]) << coll << " of " << count << " floats: plain buffers, then registered ones";
  }
}

// Messages that start over at their ring's start (transports/shm/shm_channel.h) between processes:
// a communicator split with 16 KiB rings and restarts forced, messages of a few KiB (most find
// their ring empty), every rank checking values and counting its own restarts. `singleCopyBytes`:
// "0" for plain messages; "2048" frames those from 2 KiB with a single-copy header, which between
// processes with plain buffers says the payload follows inline: header and payload start over as one.
static void RingMessagesStartOver(tcclComm_t comm, const char* singleCopyBytes) {
  int rank = 0, n = 1;
  tcclCommUserRank(comm, &rank);
  tcclCommCount(comm, &n);
  tcclComm_t small = nullptr;
  {
    ScopedEnv ring("TCCL_SHM_RING_BYTES", "16384");
    ScopedEnv restart("TCCL_SHM_RING_RESTART", "1");
    ScopedEnv singleCopy("TCCL_SHM_SINGLE_COPY_BYTES", singleCopyBytes);
    ASSERT_EQ(tcclSuccess, tcclCommSplit(comm, 0, rank, &small, nullptr)) << tcclGetLastError(comm);
  }
  const uint64_t before = tccl::RingRestarts();
  SweepOptions opt;
  opt.types = {tcclFloat32, tcclFloat64, tcclInt8};
  opt.counts = {1, 1009, 3001};
  opt.largeCounts = {20011};
  opt.quickLargeCount = 20011;
  opt.expectCanonical = true;
  std::vector<std::string> failures = RunSweep(small, opt);
  for (size_t i = 0; i < failures.size() && i < 10; ++i) ADD_FAILURE() << "rank " << rank << ": " << failures[i];
  // Every rank sends in every collective but broadcast (non-roots) and reduce (the root).
  if (n > 1) {
    EXPECT_GT(tccl::RingRestarts(), before);
  }
  EXPECT_EQ(tcclSuccess, tcclCommDestroy(small));
}

TEST_F(ProcessRanks, RingMessagesStartOverBetweenProcesses) { RingMessagesStartOver(comm_, "0"); }

TEST_F(ProcessRanks, FramedRingMessagesStartOverBetweenProcesses) {
  const uint64_t before = tccl::SingleCopyMessages(tccl::CopyMode::Inline);
  RingMessagesStartOver(comm_, "2048");
  int n = 1;
  tcclCommCount(comm_, &n);
  if (n > 1) {
    EXPECT_GT(tccl::SingleCopyMessages(tccl::CopyMode::Inline), before);  // headers were read
  }
}

// Whether a call is in place is each rank's own choice: every algorithm forced in turn (run level,
// so the non-canonical ones are admitted too) with even ranks in place and odd ones out of place,
// across processes with plain buffers, where every message goes through the channels.
TEST_F(ProcessRanks, EveryAlgorithmWithRanksMixingInPlace) {
  int rank = 0;
  tcclCommUserRank(comm_, &rank);
  ScopedEnv det("TCCL_DETERMINISM", "run");
  for (const tccl::AlgorithmInfo& alg : tccl::AllAlgorithms()) {
    ScopedEnv algo("TCCL_ALGO", ForcedAlgorithm(alg).c_str());
    tcclComm_t forced = nullptr;
    ASSERT_EQ(tcclSuccess, tcclCommSplit(comm_, 0, rank, &forced, nullptr)) << tcclGetLastError(comm_);
    SweepOptions opt;
    opt.colls = {tccl::CollName(alg.coll)};
    opt.types = {tcclFloat32, tcclInt8};
    opt.largeCounts = {100003};
    opt.largeTypes = {tcclFloat32};
    opt.expectCanonical = alg.canonicalOrder;
    opt.mixInPlace = true;
    std::vector<std::string> failures = RunSweep(forced, opt);
    for (size_t i = 0; i < failures.size() && i < 10; ++i)
      ADD_FAILURE() << ForcedAlgorithm(alg) << " rank " << rank << ": " << failures[i];
    EXPECT_EQ(tcclSuccess, tcclCommDestroy(forced));
  }
}

// Where tccl::AllToAllByCma holds (ranks sharing cores, the pairs' rings larger than the
// last-level cache: 7 or more ranks on the 2-core development VM), an all-to-all of plain buffers
// offers what it sends from for CMA reads (Communicator::RunCollective: out of place the send
// buffer, in place the scratch its blocks are set aside in, where tccl::AllToAllScratchByCma holds
// too): blocks from the host's single-copy threshold on (tccl::HostSingleCopyBytes: 128 KiB
// there) are read by the receiver in one copy. Elsewhere they go through the rings. Correct
// either way. AllToAllOfPlainBuffers runs an all-to-all of `blockBytes` blocks twice, checks every
// value, and returns the messages this process read by CMA meanwhile.
static uint64_t AllToAllOfPlainBuffers(tcclComm_t comm, size_t blockBytes, bool inPlace) {
  int rank = 0, n = 1;
  tcclCommUserRank(comm, &rank);
  tcclCommCount(comm, &n);
  const size_t count = blockBytes / sizeof(float);
  std::vector<float> send(count * n), recv(count * n, -1.0f);
  float* out = inPlace ? send.data() : recv.data();
  const uint64_t before = tccl::SingleCopyMessages(tccl::CopyMode::Cma);
  for (int rep = 0; rep < 2; ++rep) {
    // Block j of rank r holds r * 1000 + j + i / 4 at element i: exact in float, distinct per block.
    for (int j = 0; j < n; ++j)
      for (size_t i = 0; i < count; ++i) send[j * count + i] = (float)(rank * 1000 + j) + (float)i * 0.25f;
    EXPECT_EQ(tcclSuccess, tcclAlltoAll(send.data(), out, count, tcclFloat32, comm, nullptr)) << tcclGetLastError(comm);
    size_t wrong = 0;
    for (int j = 0; j < n; ++j)
      for (size_t i = 0; i < count; ++i) wrong += out[j * count + i] != (float)(j * 1000 + rank) + (float)i * 0.25f;
    EXPECT_EQ(wrong, 0u) << "rank " << rank << (inPlace ? ", in place" : ", out of place");
  }
  return tccl::SingleCopyMessages(tccl::CopyMode::Cma) - before;
}

// Whether messages of `messageBytes` from an all-to-all of `blockBytes` blocks go by CMA here.
static bool AllToAllByCmaHere(tcclComm_t comm, int n, size_t blockBytes, size_t messageBytes, bool inPlace) {
  const size_t ringBytes = (size_t)tccl::ParamInt("SHM_RING_BYTES"), cache = tccl::LastLevelCacheBytes();
  const size_t from = ExchangeSingleCopyBytesHere(comm, n);
  if (from == 0 || messageBytes < from || blockBytes < from) return false;
  if (!inPlace && ExchangesByCmaHere(comm)) return true;
  return tccl::AllToAllByCma(n, n > tccl::UsableCores(), ringBytes, cache) &&
         (!inPlace || tccl::AllToAllScratchByCma(n, blockBytes, cache));
}

TEST_F(ProcessRanks, AllToAllOfPlainBuffersByCmaWhereTheRingsOutgrowTheCache) {
  int rank = 0, n = 1;
  tcclCommUserRank(comm_, &rank);
  tcclCommCount(comm_, &n);
  const std::string where = "rank " + std::to_string(rank) + " of " + std::to_string(n) + " on " +
                            std::to_string(tccl::UsableCores()) + " cores, last-level cache " +
                            std::to_string(tccl::LastLevelCacheBytes()) + " B";
  for (bool inPlace : {false, true})
    for (size_t block : {(1 << 20) + 4000,     // at 7 and 8 ranks, in place from scratch too
                         (256 << 10) + 4000,   // above the single-copy threshold
                         (128 << 10) + 4000,   // below it, above 128 KiB (where the rings outgrow the cache)
                         (64 << 10) + 4000}) {  // through the rings everywhere
      // The automatic choice here is direct: every block one message.
      EXPECT_EQ(AllToAllOfPlainBuffers(comm_, block, inPlace) > 0, AllToAllByCmaHere(comm_, n, block, block, inPlace))
          << where << ", blocks of " << block << " B" << (inPlace ? ", in place" : ", out of place");
    }
  // Forced pairwise sends 128 KiB slices of 1 MiB blocks, in place from two scratch slots: offered
  // alike, each slot rewritten only after the step that sent from it is done.
  const ForcedSplit pairwise = SplitForcing(comm_, "alltoall:pairwise");
  ASSERT_NE(pairwise.comm, nullptr);
  for (bool inPlace : {false, true})
    EXPECT_EQ(AllToAllOfPlainBuffers(pairwise.comm, 1 << 20, inPlace) > 0,
              AllToAllByCmaHere(pairwise.comm, n, 1 << 20, (size_t)tccl::ParamInt("CHUNK_BYTES"), inPlace))
        << where << ", pairwise" << (inPlace ? ", in place" : ", out of place");
  EXPECT_EQ(tcclSuccess, tcclCommDestroy(pairwise.comm));
}

// Buffers that only some ranks allocate with tcclMemAlloc make those ranks price single copy. If
// that changes their choice of algorithm, the first message's tag reports it, naming the likely
// cause; if not (at 3+ ranks the others choose direct all-gather too), the call works. Either way
// no rank hangs and no rank returns success with wrong data.
TEST_F(ProcessRanks, SingleCopyOnSomeRanksOnlyIsAClearError) {
  int rank = 0, n = 1;
  tcclCommUserRank(comm_, &rank);
  tcclCommCount(comm_, &n);
  if (n < 2) GTEST_SKIP() << "needs two ranks";
  tcclComm_t sc = nullptr;
  ASSERT_EQ(tcclSuccess, tcclCommSplit(comm_, 0, rank, &sc, nullptr)) << tcclGetLastError(comm_);
  const size_t count = 1 << 20;  // 4 MiB of floats per rank: direct all-gather with single copy
  std::vector<float> plain;
  float *send = nullptr, *recv = nullptr;
  if (rank == 0) {
    ASSERT_EQ(tcclSuccess, tcclMemAlloc(reinterpret_cast<void**>(&send), count * sizeof(float)));
    ASSERT_EQ(tcclSuccess, tcclMemAlloc(reinterpret_cast<void**>(&recv), count * n * sizeof(float)));
  } else {
    plain.resize(count * (n + 1));
    send = plain.data();
    recv = plain.data() + count;
  }
  for (size_t i = 0; i < count; ++i) send[i] = (float)(rank + i % 7);
  tcclResult_t rc = tcclAllGather(send, recv, count, tcclFloat32, sc, nullptr);
  if (rc == tcclSuccess) {
    size_t wrong = 0;
    for (int r = 0; r < n; ++r)
      for (size_t i = 0; i < count; ++i) wrong += recv[r * count + i] != (float)(r + i % 7);
    EXPECT_EQ(wrong, 0u) << "N=" << n;
  } else {
    // The rank that read the tag names the cause; the others report that rank's failure.
    std::string msg = tcclGetLastError(sc);
    EXPECT_NE(msg.find("rank"), std::string::npos) << msg;
    if (n == 2) {
      EXPECT_NE(msg.find("chose differently"), std::string::npos) << msg;
    }
  }
  if (rank == 0) {
    tcclMemFree(send);
    tcclMemFree(recv);
  }
  tcclCommDestroy(sc);
}

// After staged calls: every rank received some piece read from the mapped staging (as in
// SingleCopyFromMemAllocBuffers, this needs a host that lets ranks map each other's memfds). Only
// a communicator on one host shares its staging; tests/netns names each rank's "host" with
// TCCL_HOST_ID, so ranks compare theirs.
bool OnOneHost(tcclComm_t sc) {
  const char* host = getenv("TCCL_HOST_ID");
  int64_t id = host ? (int64_t)(std::hash<std::string>{}(host) >> 2) : 0, lo = 0, hi = 0;
  EXPECT_EQ(tcclSuccess, tcclAllReduce(&id, &lo, 1, tcclInt64, tcclMin, sc, nullptr));
  EXPECT_EQ(tcclSuccess, tcclAllReduce(&id, &hi, 1, tcclInt64, tcclMax, sc, nullptr));
  return lo == hi;
}
void ExpectReadsFromMappedStaging(tcclComm_t sc, int rank, int n, uint64_t mappedBefore) {
  if (n > 1 && OnOneHost(sc) && tccl::SingleCopyMessages(tccl::CopyMode::Mapped) == mappedBefore)
    ADD_FAILURE() << "rank " << rank << ": no message was read from mapped staging";
}

// Byte i of the data rank (or root) `owner` contributes: depends on the owner and the position,
// so a misplaced or misattributed piece is seen.
unsigned char StagedByte(size_t i, int owner) { return (unsigned char)(i * 131 + (i >> 20) * 7 + owner * 29); }

// Bytes of `got` that differ from want(i), and the first of them (got.size() if none).
template <typename Want>
std::pair<size_t, size_t> WrongBytes(const std::vector<unsigned char>& got, Want want) {
  size_t wrong = 0, first = got.size();
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != want(i)) wrong++, first = std::min(first, i);
  return {wrong, first};
}

// The staged broadcast (src/algorithms/staged.cc) with plain malloc buffers: the root
// stages 1 MiB pieces in shared scratch and the others map it and read each piece in one copy.
// Several pieces with a short last one, every root, in and out of place, 1- and 4-byte elements.
TEST_F(ProcessRanks, StagedBroadcastReadsSharedStagingInOneCopy) {
  const ForcedSplit f = SplitForcing(comm_, "broadcast:staged");
  ASSERT_NE(f.comm, nullptr);
  const int rank = f.rank, n = f.n;
  tcclComm_t sc = f.comm;
  const size_t bytes = (3 << 20) + 4 * 7;
  for (tcclDataType_t dt : {tcclFloat32, tcclInt8}) {
    const size_t es = dt == tcclInt8 ? 1 : 4, count = bytes / es;
    for (int root = 0; root < n; ++root)
      for (bool inPlace : {false, true}) {
        std::vector<unsigned char> send(bytes), recv(bytes, 0xEE);
        for (size_t i = 0; i < bytes; ++i) send[i] = StagedByte(i, root);
        if (inPlace && rank == root) recv = send;
        const void* from = inPlace ? recv.data() : send.data();
        ASSERT_EQ(tcclSuccess, tcclBroadcast(from, recv.data(), count, dt, root, sc, nullptr)) << tcclGetLastError(sc);
        auto [wrong, first] = WrongBytes(recv, [&](size_t i) { return StagedByte(i, root); });
        EXPECT_EQ(wrong, 0u) << "rank " << rank << " root " << root << " es " << es << " in place " << inPlace
                             << ": first wrong byte " << first;
      }
  }
  ExpectReadsFromMappedStaging(sc, rank, n, f.mappedBefore);
  EXPECT_EQ(tcclSuccess, tcclCommDestroy(sc));
}

// The staged all-gather: every rank stages its own block the same way and reads every other
// block's pieces from its owner's staging. Blocks of 2 MiB + 28 bytes (four full 512 KiB pieces and
// a short one), in and out of place, 1- and 4-byte elements.
TEST_F(ProcessRanks, StagedAllGatherReadsSharedStagingInOneCopy) {
  const ForcedSplit f = SplitForcing(comm_, "allgather:staged");
  ASSERT_NE(f.comm, nullptr);
  const int rank = f.rank, n = f.n;
  tcclComm_t sc = f.comm;
  const size_t block = (2 << 20) + 4 * 7, total = block * n;
  for (tcclDataType_t dt : {tcclFloat32, tcclInt8}) {
    const size_t es = dt == tcclInt8 ? 1 : 4;
    for (bool inPlace : {false, true}) {
      std::vector<unsigned char> send(block), recv(total, 0xEE);
      for (size_t i = 0; i < block; ++i) send[i] = StagedByte(i, rank);
      if (inPlace) std::copy(send.begin(), send.end(), recv.begin() + rank * block);
      const void* from = inPlace ? recv.data() + rank * block : send.data();
      ASSERT_EQ(tcclSuccess, tcclAllGather(from, recv.data(), block / es, dt, sc, nullptr)) << tcclGetLastError(sc);
      auto [wrong, first] = WrongBytes(recv, [&](size_t i) { return StagedByte(i % block, (int)(i / block)); });
      EXPECT_EQ(wrong, 0u) << "rank " << rank << " es " << es << " in place " << inPlace << ": first wrong byte "
                           << first;
    }
  }
  ExpectReadsFromMappedStaging(sc, rank, n, f.mappedBefore);
  EXPECT_EQ(tcclCommDestroy(sc), tcclSuccess);
}

// Its pieces are read from the staging in one copy from the all-gather's single-copy threshold on
// (tccl::HostSingleCopyBytes: 128 KiB where the pairs' rings outgrow the cache, as at 7 and 8 ranks
// on the 2-core development VM; 256 KiB elsewhere; 16 KiB where exchanges go by CMA); a smaller
// piece goes through the rings as well.
// Blocks of 64, 128 and 256 KiB + 4000 B, plain buffers, every value checked.
TEST_F(ProcessRanks, StagedAllGatherReadsItsScratchInOneCopyFromTheHostsThreshold) {
  const ForcedSplit f = SplitForcing(comm_, "allgather:staged");
  ASSERT_NE(f.comm, nullptr);
  const int rank = f.rank, n = f.n;
  const bool shared = n > 1 && OnOneHost(f.comm);  // staging is shared only on one host
  for (size_t block : {(size_t)(256 << 10) + 4000, (size_t)(128 << 10) + 4000, (size_t)(64 << 10) + 4000}) {
    const size_t count = block / sizeof(float);
    std::vector<float> send(count), recv(count * n, -1.0f);
    for (size_t i = 0; i < count; ++i) send[i] = (float)(rank * 1000) + (float)i * 0.25f;
    const uint64_t before = tccl::SingleCopyMessages(tccl::CopyMode::Mapped);
    ASSERT_EQ(tcclSuccess, tcclAllGather(send.data(), recv.data(), count, tcclFloat32, f.comm, nullptr))
        << tcclGetLastError(f.comm);
    const uint64_t mapped = tccl::SingleCopyMessages(tccl::CopyMode::Mapped) - before;
    size_t wrong = 0;
    for (int r = 0; r < n; ++r)
      for (size_t i = 0; i < count; ++i) wrong += recv[r * count + i] != (float)(r * 1000) + (float)i * 0.25f;
    EXPECT_EQ(wrong, 0u) << "rank " << rank << ", blocks of " << block << " B";
    EXPECT_EQ(mapped > 0, shared && count * sizeof(float) >= ExchangeSingleCopyBytesHere(f.comm, n))
        << "rank " << rank << " of " << n << (shared ? " on one host" : "") << ", blocks of " << block
        << " B, threshold " << ExchangeSingleCopyBytesHere(f.comm, n) << " B, last-level cache "
        << tccl::LastLevelCacheBytes() << " B";
  }
  EXPECT_EQ(tcclSuccess, tcclCommDestroy(f.comm));
}

// The direct algorithms (two-shot all-reduce, direct reduce-scatter and reduce) over tcclMemAlloc
// buffers cut their slices to the host's single-copy threshold (128 or 256 KiB) where a chunk holds
// one (the two-shot: four), so the receivers read them from the senders' buffers, where the rings'
// slices (at most 128 KiB, less from 4 ranks) would go through the rings (DirectSliceCount,
// src/algorithms/direct_shot.cc). Chunks of that many thresholds and 4000 B, sums of small
// integers (exact in any order), in and out of place, every value checked.
TEST_F(ProcessRanks, DirectAlgorithmsReadTcclMemAllocSlicesInOneCopy) {
  const ForcedSplit f = SplitForcing(comm_, "allreduce:twoshot;reducescatter:direct;reduce:direct");
  ASSERT_NE(f.comm, nullptr);
  const int rank = f.rank, n = f.n;
  const bool shared = n > 1 && OnOneHost(f.comm);
  for (const char* coll : {"all_reduce", "reduce_scatter", "reduce"})
    for (bool inPlace : {false, true}) {
      const std::string c = coll;
      const size_t thresholds = c == "all_reduce" ? 4 : 1;
      const size_t chunk = (thresholds * HostSingleCopyBytesHere(n) + 4000) / sizeof(float);
      const size_t count = c == "all_reduce" ? chunk * n : chunk;           // the call's count
      const size_t sendCount = c == "reduce_scatter" ? chunk * n : count;   // elements sent by each rank
      void *sendMem = nullptr, *recvMem = nullptr;
      ASSERT_EQ(tcclSuccess, tcclMemAlloc(&sendMem, sendCount * sizeof(float)));
      ASSERT_EQ(tcclSuccess, tcclMemAlloc(&recvMem, sendCount * sizeof(float)));
      float *send = static_cast<float*>(sendMem), *recv = static_cast<float*>(recvMem);
      // Element i of rank r: r + (i % 61); the sum over ranks is exact in float.
      for (size_t i = 0; i < sendCount; ++i) send[i] = (float)(rank + (int)(i % 61));
      if (inPlace) std::copy(send, send + sendCount, recv);
      // In place, a reduce-scatter's output is this rank's chunk of the input buffer.
      float* out = inPlace && c == "reduce_scatter" ? recv + rank * chunk : recv;
      const float* in = inPlace ? recv : send;
      const uint64_t before = tccl::SingleCopyMessages(tccl::CopyMode::Mapped);
      tcclResult_t res = c == "all_reduce"       ? tcclAllReduce(in, out, count, tcclFloat32, tcclSum, f.comm, nullptr)
                         : c == "reduce_scatter" ? tcclReduceScatter(in, out, count, tcclFloat32, tcclSum, f.comm, nullptr)
                                                 : tcclReduce(in, out, count, tcclFloat32, tcclSum, 0, f.comm, nullptr);
      ASSERT_EQ(tcclSuccess, res) << tcclGetLastError(f.comm);
      const uint64_t mapped = tccl::SingleCopyMessages(tccl::CopyMode::Mapped) - before;
      const std::string what = c + " rank " + std::to_string(rank) + " of " + std::to_string(n) +
                               (inPlace ? ", in place" : ", out of place");
      if (c != "reduce" || rank == 0) {
        const size_t offset = c == "reduce_scatter" ? rank * chunk : 0;  // where this rank's output starts in the input
        size_t wrong = 0;
        for (size_t i = 0; i < count; ++i)
          wrong += out[i] != (float)(n * (n - 1) / 2 + n * (int)((offset + i) % 61));
        EXPECT_EQ(wrong, 0u) << what;
        EXPECT_EQ(mapped > 0, shared) << what << ", host threshold " << HostSingleCopyBytesHere(n) << " B";
      }
      EXPECT_EQ(tcclSuccess, tcclMemFree(sendMem));
      EXPECT_EQ(tcclSuccess, tcclMemFree(recvMem));
    }
  EXPECT_EQ(tcclSuccess, tcclCommDestroy(f.comm));
}

}  // namespace
}  // namespace tccl_test

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  // Only rank 0 prints the full GoogleTest report; failures are printed by whichever rank has them.
  const char* rank = getenv("RANK");
  if (rank && std::string(rank) != "0") {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    struct FailurePrinter : ::testing::EmptyTestEventListener {
      void OnTestPartResult(const ::testing::TestPartResult& r) override {
        if (r.failed()) fprintf(stderr, "%s:%d: Failure\n%s\n", r.file_name(), r.line_number(), r.summary());
      }
    };
    listeners.Append(new FailurePrinter);
  }
  return RUN_ALL_TESTS();
}
