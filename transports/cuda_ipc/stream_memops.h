// Stream memory operations: the GPU's front end writes a 32-bit value, or waits until one is at
// least a given value, in stream order, without running a kernel. They are how ranks sharing a GPU
// from separate processes wait for each other: a kernel spinning on a peer's flag holds the GPU
// until its time slice ends (2.2 ms per barrier measured on an H100, perf/cuda/ipc_sync_probe.cu),
// while a front-end wait lets the other process's context run (8 us per barrier).
//
// The driver functions are resolved through the runtime's entry-point query, so libtccl does not
// link libcuda and loads on machines without a driver.
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <vector>

#include "core/status.h"

namespace tccl {

class StreamMemOps {
 public:
  // Resolves the driver entry point once per process; an error if the driver lacks it.
  static Status Get(const StreamMemOps** out);

  // Appends to a batch (executed in order, as one submission).
  static void Write(std::vector<CUstreamBatchMemOpParams>* batch, CUdeviceptr addr, uint32_t value);
  static void WaitAtLeast(std::vector<CUstreamBatchMemOpParams>* batch, CUdeviceptr addr, uint32_t value);
  Status Submit(cudaStream_t stream, std::vector<CUstreamBatchMemOpParams>& batch) const;

 private:
  using BatchFn = CUresult (*)(CUstream, unsigned int, CUstreamBatchMemOpParams*, unsigned int);
  BatchFn batch_ = nullptr;
};

}  // namespace tccl
