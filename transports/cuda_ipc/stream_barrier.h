// A barrier among the ranks of one host, enqueued on a CUDA stream: the stream passes it once every
// rank's stream has reached it. No kernel runs and no host thread waits: each rank's stream sets a
// flag in every peer's window, then waits (in the GPU front end) for every peer's flag in its own
// window, then clears those flags for the next use.
//
// The values are constants (1, then 0), so a captured CUDA graph replays correctly; there is no
// sequence number to go stale. Clearing after the wait is safe because consecutive barriers
// alternate between two flag sets (parity): a peer can set the same-parity flag again only after
// passing the next barrier, which needs this rank's signal, which this stream sends after its
// clear. For the same reason every operation uses an even number of barriers, so the parity at an
// operation's start is always 0 whether it was recorded in a graph or issued directly.
#pragma once

#include <cuda_runtime_api.h>

#include <atomic>
#include <vector>

#include "transports/cuda_ipc/ipc_window.h"
#include "transports/cuda_ipc/stream_memops.h"

namespace tccl {

class StreamBarrier {
 public:
  StreamBarrier(const IpcWindow* window, int rank, int nranks, const StreamMemOps* ops)
      : w_(window), rank_(rank), nranks_(nranks), ops_(ops), ones_(2 * nranks, 1) {}

  // Enqueues barrier number `index` of the current operation (its parity is index & 1).
  Status Arrive(cudaStream_t stream, int index) const;

  // After a failure: sets every flag this rank waits for, from the host, so that a stream stuck
  // in a barrier moves on. Called repeatedly by the watchdog while the communicator lives
  // (each barrier clears the flags again after passing).
  void ReleaseOnce(cudaStream_t side) const;

 private:
  const IpcWindow* w_;
  int rank_, nranks_;
  const StreamMemOps* ops_;
  std::vector<uint32_t> ones_;  // every flag of this rank set, for ReleaseOnce
};

}  // namespace tccl
