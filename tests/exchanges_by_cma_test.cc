// Exchanges by CMA (src/comm/exchanges_by_cma.h), with ranks as processes: where the machine model
// measured CMA faster (two ranks with a core each, or more ranks than cores), an all-gather's blocks from the host's
// single-copy threshold on are read by the receiver straight from the sender's plain buffer;
// elsewhere they go through the rings; a 2-rank broadcast's receiver reads the root's buffer
// alike where BroadcastByCma holds for its size. Correct either way. tests/CMakeLists.txt also runs the
// whole process suite at 2 and 5 ranks under a machine model that makes the rule hold
// (tests/data/machine_model_exchanges_by_cma.txt), so both sides run on every machine.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/process_ranks.h"
#include "transports/shm/single_copy.h"

namespace tccl_test {
namespace {

// An all-gather of `blockBytes` blocks of plain buffers, twice, every value checked; returns the
// messages this process read by CMA meanwhile.
uint64_t AllGatherOfPlainBuffers(tcclComm_t comm, size_t blockBytes, bool inPlace) {
  int rank = 0, n = 1;
  tcclCommUserRank(comm, &rank);
  tcclCommCount(comm, &n);
  const size_t count = blockBytes / sizeof(float);
  std::vector<float> send(count), recv(count * n, -1.0f);
  float* mine = inPlace ? recv.data() + (size_t)rank * count : send.data();
  const uint64_t before = tccl::SingleCopyMessages(tccl::CopyMode::Cma);
  for (int rep = 0; rep < 2; ++rep) {
    // Rank r's element i: r * 1000 + rep + i / 4, exact in float and distinct per rank and call.
    for (size_t i = 0; i < count; ++i) mine[i] = (float)(rank * 1000 + rep) + (float)i * 0.25f;
    EXPECT_EQ(tcclSuccess, tcclAllGather(mine, recv.data(), count, tcclFloat32, comm, nullptr))
        << tcclGetLastError(comm);
    size_t wrong = 0;
    for (int r = 0; r < n; ++r)
      for (size_t i = 0; i < count; ++i) wrong += recv[r * count + i] != (float)(r * 1000 + rep) + (float)i * 0.25f;
    EXPECT_EQ(wrong, 0u) << "rank " << rank << (inPlace ? ", in place" : ", out of place");
  }
  return tccl::SingleCopyMessages(tccl::CopyMode::Cma) - before;
}

TEST_F(ProcessRanks, AllGatherOfPlainBuffersByCmaWhereExchangesGoByCma) {
  int rank = 0, n = 1;
  tcclCommUserRank(comm_, &rank);
  tcclCommCount(comm_, &n);
  const bool rule = ExchangesByCmaHere(comm_);
  const size_t threshold = ExchangeSingleCopyBytesHere(comm_, n);
  const std::string where = "rank " + std::to_string(rank) + " of " + std::to_string(n) +
                            (rule ? ", exchanges by CMA" : ", exchanges through the rings") + ", threshold " +
                            std::to_string(threshold) + " B";
  // Not the staged all-gather (the model picks it at 3 ranks and more for large blocks): its
  // blocks are read from the shared scratch their senders copy them into, mapped by every local
  // rank, not by CMA.
  const tcclComm_t comm = SplitForcing(comm_, "allgather:^staged").comm;
  ASSERT_NE(comm, nullptr);
  for (bool inPlace : {false, true})
    for (size_t block : {(size_t)(1 << 20) + 4000, (size_t)(256 << 10), (size_t)(64 << 10) + 4000, (size_t)(16 << 10) + 400, (size_t)(8 << 10)}) {
      const uint64_t byCma = AllGatherOfPlainBuffers(comm, block, inPlace);
      uint64_t everyRank = 0;
      ASSERT_EQ(tcclSuccess, tcclAllReduce(&byCma, &everyRank, 1, tcclUint64, tcclSum, comm, nullptr));
      const std::string what = where + ", blocks of " + std::to_string(block) + " B" +
                               (inPlace ? ", in place" : ", out of place") + ", " + std::to_string(byCma) +
                               " read by CMA here, " + std::to_string(everyRank) + " on every rank";
      // Every algorithm sends some rank's own block to a peer on its host from where the call
      // offers it, in equal slices of at most the rings' 128 KiB (each more than half of it), or
      // whole: from the threshold on, those messages are read by CMA. (Not necessarily by every
      // rank: across two hosts a ring's rank may receive only from the other host.)
      if (!rule || block < threshold) {
        EXPECT_EQ(byCma, 0u) << what;
      } else {
        EXPECT_GT(everyRank, 0u) << what;
      }
    }
  EXPECT_EQ(tcclSuccess, tcclCommDestroy(comm));
}

// A broadcast of `bytes` of plain buffers from `root`, twice, every value checked; returns the
// messages this process read by CMA meanwhile.
uint64_t BroadcastOfPlainBuffers(tcclComm_t comm, size_t bytes, int root, bool inPlace) {
  int rank = 0;
  tcclCommUserRank(comm, &rank);
  const size_t count = bytes / sizeof(float);
  std::vector<float> send(count), recv(count, -1.0f);
  float* from = inPlace ? recv.data() : send.data();
  const uint64_t before = tccl::SingleCopyMessages(tccl::CopyMode::Cma);
  for (int rep = 0; rep < 2; ++rep) {
    if (rank == root)
      for (size_t i = 0; i < count; ++i) from[i] = (float)(root * 1000 + rep) + (float)i * 0.25f;
    EXPECT_EQ(tcclSuccess, tcclBroadcast(from, recv.data(), count, tcclFloat32, root, comm, nullptr))
        << tcclGetLastError(comm);
    size_t wrong = 0;
    for (size_t i = 0; i < count; ++i) wrong += recv[i] != (float)(root * 1000 + rep) + (float)i * 0.25f;
    EXPECT_EQ(wrong, 0u) << "rank " << rank << ", root " << root << (inPlace ? ", in place" : ", out of place");
  }
  return tccl::SingleCopyMessages(tccl::CopyMode::Cma) - before;
}

// Where BroadcastByCma holds, the receiver reads the root's plain buffer by CMA in one message per
// call (the cost model charges each CMA read, so the unsliced direct broadcast is chosen over the
// chain's 128 KiB slices); elsewhere nothing is read by CMA.
TEST_F(ProcessRanks, BroadcastOfPlainBuffersByCmaWhereItsRuleHolds) {
  int rank = 0, n = 1;
  tcclCommUserRank(comm_, &rank);
  tcclCommCount(comm_, &n);
  for (int root : {0, n - 1})
    for (bool inPlace : {true, false})
      for (size_t bytes : {(size_t)(16 << 10), (size_t)(32 << 10), (size_t)(64 << 10) + 4000, (size_t)(1 << 20),
                           (size_t)(2 << 20)}) {
        const bool rule = BroadcastByCmaHere(comm_, n, bytes);
        const uint64_t byCma = BroadcastOfPlainBuffers(comm_, bytes, root, inPlace);
        const std::string what = "rank " + std::to_string(rank) + " of " + std::to_string(n) + ", root " +
                                 std::to_string(root) + ", " + std::to_string(bytes) + " B" +
                                 (inPlace ? ", in place" : ", out of place") +
                                 (rule ? ", by CMA" : ", through the rings");
        EXPECT_EQ(byCma, rule && rank != root ? 2u : 0u) << what;
      }
}

}  // namespace
}  // namespace tccl_test
