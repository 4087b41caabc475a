// Small helpers for the CUDA runtime: errors as Status, the calling thread's device.
#pragma once

#include <cuda_runtime_api.h>

#include "core/status.h"

namespace tccl {

// ok, or tcclUnhandledDeviceError naming the call and CUDA's reason.
Status CudaStatus(cudaError_t e, const char* what);

#define TCCL_CUDA_RETURN(call, what) TCCL_RETURN_IF_ERROR(::tccl::CudaStatus((call), (what)))

// Makes `device` current on this thread for the guard's lifetime (tccl calls may come from any
// thread, whose current device may be another one).
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    if (cudaGetDevice(&previous_) == cudaSuccess && previous_ != device) cudaSetDevice(device);
    else previous_ = -1;
  }
  ~DeviceGuard() {
    if (previous_ >= 0) cudaSetDevice(previous_);
  }

 private:
  int previous_ = -1;
};

// Whether the stream is being captured into a CUDA graph.
bool Capturing(cudaStream_t stream);

}  // namespace tccl
