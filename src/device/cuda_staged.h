// Collectives of a CUDA communicator whose ranks span hosts: each round copies the device data into
// pinned host memory, runs the host collective over the host transports (shared memory, TCP) from
// a stream callback, and copies the result back, all in stream order (so the call still returns at
// once, and a CUDA graph can capture it). Rounds alternate between two pinned slots and run on
// three streams, so one round's network transfer overlaps the next round's copy to the host and
// the previous round's copy back (docs/gpu.md).
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <mutex>

#include "algorithms/schedule.h"
#include "core/status.h"

namespace tccl {

class Communicator;

// Shared by the stream callbacks, which may run after the communicator is gone (a callback then
// does nothing): the host communicator is reached only while `host` is set, under `mu`.
struct StagingLink {
  std::mutex mu;
  Communicator* host = nullptr;
};

class HostStaging {
 public:
  static Status Create(Communicator* host, size_t bytes, std::unique_ptr<HostStaging>* out);
  ~HostStaging();

  Status Enqueue(const CollArgs& a, tcclDataType_t dt, const void* send, void* recv, cudaStream_t stream);

 private:
  struct Slot {
    char* send = nullptr;  // pinned
    char* recv = nullptr;  // pinned
    cudaEvent_t copiedIn = nullptr, reduced = nullptr, copiedOut = nullptr;
  };
  HostStaging() = default;
  Status HostCall(const CollArgs& a, tcclDataType_t dt, const void* send, void* recv, bool captured);

  std::shared_ptr<StagingLink> link_;
  Slot slots_[2];
  size_t slotBytes_ = 0;
  cudaEvent_t started_ = nullptr;
  cudaStream_t copyStream_ = nullptr;  // device -> host copies
  cudaStream_t hostStream_ = nullptr;  // host collectives (stream callbacks)
};

}  // namespace tccl
