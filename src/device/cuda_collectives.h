// Collectives among the ranks of one host through their CUDA IPC windows (docs/gpu.md).
//
// Every operation runs in rounds sized to the window's areas. A round: each rank copies what it
// contributes into its `in` area (stage), all ranks pass a stream barrier, each rank reads its
// peers' areas directly (a copy, or a tree reduction in one kernel), and a second barrier lets the
// areas be reused. Two-shot all-reduce reduces its own slice into its `out` area between the two
// barriers and gathers the peers' slices after the second. Every reduced element is computed by
// one thread from all N inputs in the canonical tree order, so every algorithm here is canonical
// (strict determinism) and equals tcclReduceReference bit for bit.
#pragma once

#include <cuda_runtime_api.h>

#include "algorithms/schedule.h"
#include "core/status.h"
#include "transports/cuda_ipc/ipc_window.h"
#include "transports/cuda_ipc/stream_barrier.h"

namespace tccl {

struct IpcGroup {
  const IpcWindow* window = nullptr;
  const StreamBarrier* barrier = nullptr;
  int rank = 0, nranks = 1;
};

enum class IpcAllReduce { OneShot, TwoShot };
// The all-reduce algorithm for a message of `bytes` per rank (the rule and its derivation are in
// the .cc); `forced` from TCCL_ALGO where given.
IpcAllReduce ChooseIpcAllReduce(size_t bytes, int nranks);
const char* IpcAllReduceName(IpcAllReduce a);

// Enqueues the collective on `stream`; returns once enqueued.
Status EnqueueIpcCollective(const IpcGroup& g, const CollArgs& a, tcclDataType_t dt, const void* send, void* recv,
                            cudaStream_t stream);

}  // namespace tccl
