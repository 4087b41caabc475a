// Per-communicator bootstrap collectives over the store: all-gather of small records and barrier.
// Keys are namespaced by the communicator id so communicators sharing a store never collide.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "bootstrap/store_client.h"

namespace tccl {

class Bootstrap {
 public:
  Bootstrap(std::shared_ptr<StoreClient> store, std::string ns, int rank, int nranks,
            double timeoutSec)
      : store_(std::move(store)), ns_(std::move(ns)), rank_(rank), nranks_(nranks),
        timeoutSec_(timeoutSec) {}

  // Fails with the reason another rank gave when it abandoned the namespace (below).
  Status AllGather(const std::string& mine, std::vector<std::string>* all);
  Status Barrier();

  // Tells every rank that waits in namespace `ns`, now or later, that this rank will not come: their
  // AllGather fails at once with `reason` (which names this rank) instead of at its deadline. Best
  // effort, bounded by `deadline`: a rank that is already failing must not wait long for it.
  static void Abandon(StoreClient& store, const std::string& ns, const std::string& reason,
                      const Deadline& deadline);

  const std::shared_ptr<StoreClient>& store() const { return store_; }
  const std::string& ns() const { return ns_; }

 private:
  std::shared_ptr<StoreClient> store_;
  std::string ns_;
  int rank_, nranks_;
  double timeoutSec_;
  uint64_t seq_ = 0;
};

}  // namespace tccl
