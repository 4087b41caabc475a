// Shared-memory transport for ranks on one host (processes or threads).
//
// One segment per communicator per host, created by the host's lowest rank:
//   [ failure record | doorbell per local rank | channel for each ordered pair of local ranks ]
// Memory: L*(L-1) channels of TCCL_SHM_RING_BYTES each (L = ranks on this host).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "transports/shm/doorbell.h"
#include "transports/shm/shm_segment.h"
#include "transports/shm/single_copy.h"
#include "transports/transport.h"

namespace tccl {

// Messages that started over at the start of their ring (shm_channel.h), in this process: for tests.
uint64_t RingRestarts();
// Bytes received into their final place with streaming stores (ShmOperation::streamOutputs), in
// this process: for tests.
uint64_t StreamedReceiveBytes();
// For tests, in this process: send windows (Connection::SendWindow) of at most `bytes` (0: as the
// ring allows), and none at every `nth` call (0: never), so that a forward runs short or stops.
void LimitSendWindowsForTests(size_t bytes, unsigned nth);
// For tests, in this process: send windows are to be written with streaming stores whatever the
// ring's copy-in does (as in the VM's slow spells), so that path runs between real ranks.
void StreamSendWindowsForTests(bool stream);

// Whether `rings` rings of `ringBytes` outgrow a quarter of a last-level cache of `cacheBytes`;
// false when the cache's size is unknown (0). A quarter, measured (docs/performance.md, "Rings
// that start over"; 2 cores, 32 MiB L3, 1 MiB rings): restarts made operations writing 12 rings
// or more up to ~2x faster and the broadcast's 7 rings 10-35% slower, so the line lies between.
bool RingsOutgrowTheCache(size_t rings, size_t ringBytes, size_t cacheBytes);

// Whether the host's pairs' rings, L * (L - 1) of `ringBytes` for L local ranks, outgrow the whole
// last-level cache of `cacheBytes` (false when its size is unknown, 0). Operations that keep every
// pair's ring busy (direct all-gather, reduce-scatter, all-to-all; two-shot all-reduce) then pay
// for a message's two copies through its ring in memory, not in the cache.
bool PairRingsOutgrowTheCache(size_t localRanks, size_t ringBytes, size_t cacheBytes);

// The host's single-copy threshold (SingleCopyConfig::minBytes) given TCCL_SHM_SINGLE_COPY_BYTES'
// `singleCopyBytes`: where the pairs' rings outgrow the cache, the smaller of it and
// kSingleCopyBytesWhereRingsOutgrowTheCache, else it. Measured at 7 and 8 ranks on 2 cores, 32 MiB
// L3, 1 MiB rings (docs/single_copy.md, "Every operation from 128 KiB where the rings outgrow the
// cache"): 128 KiB all-to-all blocks by CMA ~700 us against the rings' ~870 (64 KiB ones ~330
// against ~255); the staged all-gather, whose 128 KiB blocks peers then read from the shared
// scratch in one copy, took an 8-rank 1 MiB all-gather from 506-1341 to 268-306 us. Where the
// rings fit, 128 KiB blocks are as fast through them (4 ranks: the staged all-gather with 192 KiB
// blocks 20% slower than direct).
constexpr size_t kSingleCopyBytesWhereRingsOutgrowTheCache = 128 << 10;
size_t HostSingleCopyBytes(size_t singleCopyBytes, size_t localRanks, size_t ringBytes, size_t cacheBytes);

// When messages may start over at their ring's start (shm_channel.h; TCCL_SHM_RING_RESTART).
enum class RingRestart { Auto, Never, Always };

// What the running operation sets for this rank's connections (the communicator, before each
// operation; read by the connections while it runs).
struct ShmOperation {
  // Whether its ring messages may start over (ShmHost::RingRestartFor).
  bool ringRestart = false;
  // Whether receives into their final place (RecvSink::finalDst) are copied out of the ring, or
  // from a peer's memory, with streaming stores: set per plan where the operation's buffers on
  // the host outgrow the last-level cache (OutgrowsLastLevelCache, topology/cache_size.h).
  bool streamOutputs = false;
  // Whether messages from buffers in the registrations table are offered to the receiver for CMA
  // reads (single_copy.h); where not, they go through the ring. Set per plan: on for an all-to-all
  // that offers its own buffers (AllToAllByCma), off for the user's registrations
  // (src/comm/registered_by_cma.h).
  bool offerRegistered = false;
  // Messages from this size on carry a single-copy header (may be read in one copy), instead of
  // the host's threshold (SingleCopyConfig::minBytes) where smaller: both ends frame a message by
  // its size alone, so every rank of the host sets the same value for the same operation. Set
  // per plan (the all-gather and all-to-all where exchanges go by CMA, src/comm/exchanges_by_cma.h).
  size_t singleCopyFrom = SIZE_MAX;
};

class ShmHost {
 public:
  // localRanks: communicator ranks on this host, ascending; me is among them. Collective over the
  // whole communicator (uses bootstrap barriers), so every rank calls it, with or without peers.
  // localPids / localSameProcess: each local rank's pid and whether it is a thread of this
  // process. singleCopyBytes: messages from this size on (or from HostSingleCopyBytes' smaller
  // size) may be read by the receiver straight from the sender's memory (single_copy.h); 0 keeps
  // every message in the rings. ringRestart:
  // when messages may start over at their ring's start (RingRestartFor).
  static Status Setup(Bootstrap& boot, const std::string& segName, const std::vector<int>& localRanks,
                      const std::vector<int>& localPids, const std::vector<bool>& localSameProcess, int me,
                      size_t ringBytes, size_t singleCopyBytes, const Registrations* registered,
                      RingRestart ringRestart, std::shared_ptr<ShmHost>* out);

  // eachRankHasACore: the host's ranks are no more than its usable cores (the sender's choice of
  // how to copy into the ring may then weigh the two ends as concurrent stages, ring_copy_in.h).
  std::unique_ptr<Connection> ConnectionTo(int peerRank, bool eachRankHasACore);
  Doorbell* MyDoorbell();
  size_t BytesMapped() const { return seg_.size(); }
  size_t RingBytes() const { return ringBytes_; }  // each directed channel's byte ring
  // Whether an operation whose schedules write `rings` of this host's rings (counted over its
  // ranks; for a send/recv group, the host's ranks times the local ranks it sends to) restarts its
  // messages (shm_channel.h). Auto: where those rings outgrow the cache
  // (RingsOutgrowTheCache): all-gather, reduce-scatter, all-reduce and all-to-all from 4 ranks
  // on, broadcasts and reduces (their N-1 rings) from 10 on this VM.
  bool RingRestartFor(size_t rings) const;
  // The operation's settings (ShmOperation), set by the communicator before each operation.
  void SetOperation(const ShmOperation& op) { operation_ = op; }
  const SingleCopyConfig& SingleCopy() const { return singleCopy_; }

  // The failure record (SPEC section 5): the first local rank whose operation fails (or that is
  // aborted) writes who and why and rings every doorbell; the other local ranks see it while they
  // wait and fail at once with that reason instead of waiting for their own deadline.
  void PublishFailure(int reporterRank, const std::string& reason);
  bool FailureReported(int* reporterRank, std::string* reason) const;
  // Whether any rank has reported a failure (FailureReported's first test alone: one load).
  bool AnyFailureReported() const;

 private:
  int IndexOf(int rank) const;
  unsigned char* ChannelBase(int from, int to) const;  // from != to: no channel to itself
  Doorbell* DoorbellOf(int index) const;

  ShmSegment seg_;
  std::vector<int> localRanks_;
  int meIndex_ = -1;
  size_t ringBytes_ = 0;
  RingRestart ringRestart_ = RingRestart::Auto;
  size_t cacheBytes_ = 0;   // the last-level cache's (RingRestartFor)
  ShmOperation operation_;  // the running operation's; read by this rank's connections
  SingleCopyConfig singleCopy_;
};

}  // namespace tccl
