// Collectives of a CUDA communicator whose ranks span hosts: each round copies the device data into
// pinned host memory, runs the host collective over the host transports (shared memory, TCP) from
// a stream callback, and copies the result back, all in stream order (so the call still returns at
// once, and a CUDA graph can capture it). Rounds are bounded by the pinned buffers' size. The copy
// of one round and the network transfer of the next do not overlap yet (docs/gpu.md).
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
  HostStaging() = default;
  Status HostCall(const CollArgs& a, tcclDataType_t dt, const void* send, void* recv, cudaStream_t stream);

  Communicator* host_ = nullptr;
  std::shared_ptr<StagingLink> link_;
  char* sendStage_ = nullptr;  // pinned
  char* recvStage_ = nullptr;  // pinned
  size_t bytes_ = 0;
};

}  // namespace tccl
