// The fixture of the tests that run with ranks as processes (under tessera-run: one communicator
// per test from tcclCommInitFromEnv), a child communicator forcing an algorithm, and what those
// tests need to know of this host's rules for single-copy messages.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <memory>

#include "api/handles.h"
#include "comm/communicator.h"
#include "comm/exchanges_by_cma.h"
#include "config/params.h"
#include "tccl/tccl.h"
#include "topology/cache_size.h"
#include "transports/shm/shm_transport.h"
#include "transports/shm/single_copy.h"
#include "tuning/machine_model.h"

namespace tccl_test {

class ProcessRanks : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(tcclSuccess, tcclCommInitFromEnv(&comm_, nullptr)) << tcclGetLastError(nullptr);
  }
  void TearDown() override {
    if (comm_) {
      EXPECT_EQ(tcclSuccess, tcclCommDestroy(comm_));
    }
  }
  tcclComm_t comm_ = nullptr;
};

// The communicator's ranks on this host (tests/netns runs 2 "hosts" of 2 ranks each).
inline size_t LocalRanks(tcclComm_t comm) {
  tccl::CommRef c;
  return tccl::AcquireComm(comm, "LocalRanks", &c).ok() ? c->localRanks() : 1;
}

// Whether the communicator's ranks on this host exchange plain buffers by CMA
// (tccl::ExchangesByCma), by the same machine model as the communicators of this process
// (TCCL_TUNING_FILE where set).
inline bool ExchangesByCmaHere(tcclComm_t comm) {
  return tccl::ExchangesByCma(tccl::LoadOrMeasureMachine(), LocalRanks(comm));
}

// A child communicator of `comm` whose calls use `algo` (a TCCL_ALGO string, read when a
// communicator is set up), with this rank's place in it and the mapped-read count before its calls.
struct ForcedSplit {
  int rank = 0, n = 1;
  tcclComm_t comm = nullptr;
  uint64_t mappedBefore = 0;
};
inline ForcedSplit SplitForcing(tcclComm_t comm, const char* algo) {
  ForcedSplit f;
  tcclCommUserRank(comm, &f.rank);
  tcclCommCount(comm, &f.n);
  setenv("TCCL_ALGO", algo, 1);
  tccl::ReloadParams();
  EXPECT_EQ(tcclSuccess, tcclCommSplit(comm, 0, f.rank, &f.comm, nullptr)) << tcclGetLastError(comm);
  unsetenv("TCCL_ALGO");
  tccl::ReloadParams();
  f.mappedBefore = tccl::SingleCopyMessages(tccl::CopyMode::Mapped);
  return f;
}

// Whether a broadcast of `bytes` on `comm` (`n` ranks) reads the root's plain buffer by CMA
// (tccl::BroadcastByCma; single copy on, every rank on this host).
inline bool BroadcastByCmaHere(tcclComm_t comm, int n, size_t bytes);

// The single-copy threshold of this host's `n` ranks (tccl::HostSingleCopyBytes).
inline size_t HostSingleCopyBytesHere(int n) {
  return tccl::HostSingleCopyBytes((size_t)tccl::ParamInt("SHM_SINGLE_COPY_BYTES"), n,
                                   (size_t)tccl::ParamInt("SHM_RING_BYTES"), tccl::LastLevelCacheBytes());
}

// The threshold of the all-gather and all-to-all of `comm` (`n` ranks): lower where exchanges go
// by CMA (tccl::kSingleCopyBytesWhereExchangesGoByCma).
inline size_t ExchangeSingleCopyBytesHere(tcclComm_t comm, int n) {
  const size_t host = HostSingleCopyBytesHere(n);
  return ExchangesByCmaHere(comm) ? std::min(host, tccl::kSingleCopyBytesWhereExchangesGoByCma) : host;
}

inline bool BroadcastByCmaHere(tcclComm_t comm, int n, size_t bytes) {
  return HostSingleCopyBytesHere(n) != 0 && LocalRanks(comm) == (size_t)n &&
         tccl::BroadcastByCma(ExchangesByCmaHere(comm), LocalRanks(comm), bytes, tccl::LoadOrMeasureMachine().cacheBytes);
}

}  // namespace tccl_test
