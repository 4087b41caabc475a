// A communicator: one rank's view of a group of ranks, its connections to every peer, and the
// machinery to run schedules over them. The C handle tcclComm_t points at one of these.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "algorithms/algo_filter.h"
#include "algorithms/schedule.h"
#include "bootstrap/bootstrap.h"
#include "comm/all_to_all_by_cma.h"
#include "comm/exchanges_by_cma.h"
#include "comm/flight_recorder.h"
#include "comm/op_lock.h"
#include "comm/peer_monitor.h"
#include "comm/plan_cache.h"
#include "comm/shared_scratch_copy.h"
#include "device/device_comm.h"
#include "memory/registrations.h"
#include "exec/executor.h"
#include "transports/shm/ll_ring.h"
#include "transports/shm/shm_transport.h"
#include "transports/transport.h"
#include "tuning/cost_model.h"

namespace tccl {

// The largest payload a shared-memory message carries as LL lines, its tag in the lines too
// (CollArgs::lineMessageBytes where every rank is on this host).
constexpr size_t kLineMessagePayloadBytes = kLLMaxBytes - sizeof(OpTag);

// Settings resolved from tcclConfig_t over the parameter registry.
struct CommSettings {
  double timeoutSec = 600;
  tcclDeterminism_t determinism = tcclDeterminismStrict;
  std::string name;
  std::string algo;  // TCCL_ALGO grammar; from the config, else the parameter
  // Memory domain: TCCL_HOST_MEMORY, a CUDA device, TCCL_CUDA_DEVICE_CURRENT (resolved at init).
  // Before Resolve: undefined, so that a split inherits its parent's domain.
  int cudaDevice = TCCL_CONFIG_UNDEF_INT;
  static Status Resolve(const tcclConfig_t* config, CommSettings* out);
};

// One point-to-point operation of a group, in bytes.
struct P2POp {
  bool send = true;
  int peer = 0;
  void* buf = nullptr;
  size_t bytes = 0;
};

// enable_shared_from_this: an API call holds its communicator by a hazard slot (src/api/handles.h),
// and work that outlives the call (a host stream's queue, a group) takes a reference from it.
class Communicator : public std::enable_shared_from_this<Communicator> {
 public:
  // Joins the other ranks of communicator `commId`. On failure the namespace is abandoned
  // (AbandonJoin), so ranks waiting for this one fail at once, with its reason.
  static Status Create(std::shared_ptr<StoreClient> store, uint64_t commId, const uint8_t secret[16],
                       int rank, int nranks, const CommSettings& settings,
                       std::unique_ptr<Communicator>* out);
  // Tells the ranks of communicator `commId` that `rank` will not join, and why (Bootstrap::Abandon).
  // Also for a rank that fails before Create (its settings), once it can reach the store.
  static void AbandonJoin(StoreClient& store, uint64_t commId, int rank, int nranks, const Status& why,
                          double timeoutSec);
  ~Communicator();

  int rank() const { return rank_; }
  int nranks() const { return nranks_; }
  uint64_t commId() const { return commId_; }
  // The communicator's ranks on this host (this one included).
  size_t localRanks() const { return sameHost_.size(); }

  // Runs a collective to completion. Caller has validated arguments.
  Status RunCollective(const CollArgs& args, tcclDataType_t dt, const void* send, void* recv);
  Status RunP2P(const std::vector<P2POp>& ops);
  Status Split(int color, int key, const CommSettings& settings, std::unique_ptr<Communicator>* out);

  // Releases every thread blocked in this communicator (they return within one sleep period) and
  // tells the peers (failure record, TCP shutdown) so they fail promptly too.
  void Abort();
  bool aborted() const { return aborted_.load(); }
  // The flight recorder's text (also what is logged on failure).
  std::string DumpFlightRecorder() const;
  void SetAsyncError(const Status& st);
  tcclResult_t asyncError() const { return asyncError_.load(); }
  std::string DescribePeer(int r) const;
  // ---- for the device (CUDA) part of a communicator ----
  // The memory domain: TCCL_HOST_MEMORY or the CUDA device ordinal.
  int cudaDevice() const { return device_ ? device_->device() : TCCL_HOST_MEMORY; }
  DeviceComm* device() const { return device_.get(); }
  const PeerInfo& peer(int r) const { return peers_[r]; }
  Bootstrap& bootstrap() { return *boot_; }
  const CommSettings& settings() const { return settings_; }
  // A failure another local rank reported, or a local peer that exited (ok while all are well).
  Status CheckPeers() { return Health(true); }
  // The first failure, or ok (public for the device part: its calls return it).
  Status Usable() const { return Broken(); }
  // Records the first failure, tells the peers, dumps the flight recorder (see Fail below).
  void ReportFailure(const Status& st) { Fail(st); }
  std::string Describe() const;  // "comm 'name' (id 0x..., rank 2 of 4)"
  // tcclCommRegister / tcclCommDeregister (memory/registrations.h).
  Registrations& registrations() { return *registrations_; }

 private:
  Communicator() = default;
  // A communicator id as 16 hex digits (store keys, segment names, default names).
  static std::string IdHex(uint64_t id);
  // The store namespace of communicator `commId`'s bootstrap records.
  static std::string StoreNamespace(uint64_t commId);
  // Create's work; Create abandons the namespace when it fails.
  static Status Join(std::shared_ptr<StoreClient> store, uint64_t commId, const uint8_t secret[16], int rank,
                     int nranks, const CommSettings& settings, std::unique_ptr<Communicator>* out);
  Status Setup(std::unique_ptr<Bootstrap> boot, const uint8_t secret[16]);
  size_t SingleCopyBytesFor(const CollArgs& a, const void* send, const void* recv) const;
  // Whether a broadcast of `bytes` goes by CMA from plain buffers (BroadcastByCma, single copy on,
  // every rank on this host).
  bool BroadcastGoesByCma(size_t bytes) const;
  // `entry`: the flight-recorder entry, peers included (AddSchedulePeers), recorded as operation `seq`.
  Status Execute(const Schedule& s, const ExecKernels& k, std::vector<void*>& bufs, const OpTag& tag,
                 const FlightEntry& entry, uint64_t seq, FunctionRef<std::string()> describe);
  // Lists the peers `s` exchanges messages with in `entry` (each once).
  void AddSchedulePeers(const Schedule& s, FlightEntry* entry) const;
  // Checked while waiting: a failure another local rank reported, or a local peer that exited.
  // A peer's failure report, or a watched peer gone (any, or only those in `only`).
  Status Health(bool force = false, const std::vector<int>* only = nullptr);
  // A remote error naming the local peer whose failure record is in the host segment, if any.
  // Every operation checks: while nobody failed it is one load, inline; the rest out of line.
  Status PeerReportedFailure() const {
    return shm_ && shm_->AnyFailureReported() ? ReadPeerFailure() : Status::Ok();
  }
  Status ReadPeerFailure() const;
  // A connection that failed says little (a TCP peer may only be relaying another rank's failure):
  // add the cause from the peer monitor or from the failing peer's record in the store.
  Status Explain(const Status& st, int peer);
  std::string FailKey(int rank) const;
  // The first failure makes the communicator unusable (its streams may be mid-message): record
  // it, tell the peers, dump the flight recorder. Later calls return Broken().
  void Fail(const Status& st);
  // One load while the communicator is usable, inline (every operation checks); the rest out of line.
  Status Broken() const { return failed_.load(std::memory_order_acquire) ? DescribeFailure() : Status::Ok(); }
  Status DescribeFailure() const;

  int rank_ = 0, nranks_ = 1;
  uint64_t commId_ = 0;
  uint8_t secret_[16] = {0};
  CommSettings settings_;
  AlgoFilter filter_;
  size_t sliceBytes_ = 128 << 10;
  std::unique_ptr<Bootstrap> boot_;
  std::vector<PeerInfo> peers_;
  std::vector<int> sameHost_;  // the ranks on this host, ascending (this one included)
  // Read by the shared-memory connections: declared before them, so destroyed after them.
  std::unique_ptr<Registrations> registrations_ = std::make_unique<Registrations>();
  std::shared_ptr<ShmHost> shm_;
  bool allLocal_ = false;  // every rank is on this host (and shared memory is on)
  // What an all-to-all sends from (out of place its send buffer, in place the scratch its blocks
  // are set aside in) is offered to same-host peers for CMA reads during the call (RunCollective):
  // set where AllToAllByCma holds for this host and single copy is on.
  bool allToAllByCma_ = false;
  // Where ExchangesByCma holds (the machine model measured CMA faster; two ranks on this host with
  // a core each, or more ranks than cores), an all-gather and an out-of-place all-to-all offer the
  // blocks they send from for CMA reads, and both frame messages with a single-copy header from a
  // lower size; so does a broadcast's root where BroadcastGoesByCma holds for its size.
  bool exchangesByCma_ = false;
  std::vector<std::unique_ptr<Connection>> conns_;
  std::unique_ptr<Waiter> waiter_;
  // Per-operation temporaries. Private memory on purpose: messages sent from scratch were just
  // written, and a peer reading such dirty lines straight from this core's cache in one copy
  // measured 2x slower than the two-copy ring (in-place all-to-all, 1 MiB, 2 ranks); except where
  // AllToAllByCma holds, where an in-place all-to-all offers it for CMA reads.
  std::vector<unsigned char> scratch_;
  // Scratch of Schedule::sharedScratch schedules (staging the peers read in one copy): tcclMemAlloc
  // memory, grown as needed, freed with the communicator. sharedScratchBytes_: the single-copy
  // threshold when every local rank maps every other's memory and every rank is local, else 0.
  void* sharedScratch_ = nullptr;
  size_t sharedScratchSize_ = 0;
  size_t sharedScratchBytes_ = 0;
  SharedScratchCopy sharedScratchCopy_;  // how staging owners copy into it (ExecEnv::copyToSharedScratch)
  // The scratch `s` runs with, grown to its size: the shared scratch where the schedule asks for
  // it and there is enough, else the private one.
  void* ScratchFor(const Schedule& s, size_t elemSize);
  PlanCache plans_;
  CostContext cost_;             // the machine model and this host's shape, for selection
  ExecEnv env_;                  // filled once at setup; tag and failedPeer set per operation
  std::vector<void*> collBufs_;  // send, recv, scratch of the running collective
  OpLock opLock_;  // one operation at a time: connections are ordered streams
  uint64_t collSeq_ = 0;  // collectives only: every rank calls them in the same order
  uint64_t p2pSeq_ = 0;   // send/recv groups, numbered per rank for messages and the flight recorder
  std::unique_ptr<PeerMonitor> monitor_;
  std::unique_ptr<FlightRecorder> flight_;
  mutable std::mutex failMu_;
  Status failure_;  // the first failure; ok while the communicator is usable
  std::atomic<bool> failed_{false};  // failure_ is set (read without the lock on every call)
  uint64_t splitSeq_ = 0;
  std::atomic<bool> aborted_{false};
  std::atomic<tcclResult_t> asyncError_{tcclSuccess};
  std::unique_ptr<DeviceComm> device_;  // CUDA communicators only; destroyed first (declared last)
};

}  // namespace tccl
