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
#include "exec/executor.h"
#include "transports/shm/shm_transport.h"
#include "transports/transport.h"

namespace tccl {

// Settings resolved from tcclConfig_t over the parameter registry.
struct CommSettings {
  double timeoutSec = 600;
  tcclDeterminism_t determinism = tcclDeterminismStrict;
  std::string name;
  std::string algo;  // TCCL_ALGO grammar; from the config, else the parameter
  static Status Resolve(const tcclConfig_t* config, CommSettings* out);
};

// One point-to-point operation of a group, in bytes.
struct P2POp {
  bool send = true;
  int peer = 0;
  void* buf = nullptr;
  size_t bytes = 0;
};

class Communicator {
 public:
  static Status Create(std::shared_ptr<StoreClient> store, uint64_t commId, const uint8_t secret[16],
                       int rank, int nranks, const CommSettings& settings,
                       std::unique_ptr<Communicator>* out);
  ~Communicator();

  int rank() const { return rank_; }
  int nranks() const { return nranks_; }
  uint64_t commId() const { return commId_; }

  // Runs a collective to completion. Caller has validated arguments.
  Status RunCollective(const CollArgs& args, tcclDataType_t dt, const void* send, void* recv);
  Status RunP2P(const std::vector<P2POp>& ops);
  Status Split(int color, int key, const CommSettings& settings, std::unique_ptr<Communicator>* out);

  void Abort() { aborted_.store(true); }
  bool aborted() const { return aborted_.load(); }
  void SetAsyncError(const Status& st);
  tcclResult_t asyncError() const { return asyncError_.load(); }
  std::string DescribePeer(int r) const;
  std::string Describe() const;  // "comm 'name' (id 0x..., rank 2 of 4)"

 private:
  Communicator() = default;
  Status Setup(std::unique_ptr<Bootstrap> boot, const uint8_t secret[16]);
  Status Execute(const Schedule& s, tcclDataType_t dt, tcclRedOp_t op, std::vector<void*> bufs,
                 const std::function<std::string()>& describe);

  int rank_ = 0, nranks_ = 1;
  uint64_t commId_ = 0;
  uint8_t secret_[16] = {0};
  CommSettings settings_;
  AlgoFilter filter_;
  size_t sliceBytes_ = 128 << 10;
  std::unique_ptr<Bootstrap> boot_;
  std::vector<PeerInfo> peers_;
  std::shared_ptr<ShmHost> shm_;
  std::vector<std::unique_ptr<Connection>> conns_;
  std::unique_ptr<Waiter> waiter_;
  std::vector<unsigned char> scratch_;
  std::mutex opMutex_;  // one operation at a time: connections are ordered streams
  uint64_t seq_ = 0;
  uint64_t splitSeq_ = 0;
  std::atomic<bool> aborted_{false};
  std::atomic<tcclResult_t> asyncError_{tcclSuccess};
};

}  // namespace tccl
