#include "tests/gpu/gpu_support.h"

#include <cuda_runtime_api.h>

namespace tccl_test {

bool GpuAvailable(std::string* why) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    cudaGetLastError();
    *why = std::string("cudaGetDeviceCount: ") + cudaGetErrorString(e);
    return false;
  }
  if (n == 0) {
    *why = "no CUDA device";
    return false;
  }
  return true;
}

// Everything goes through the rank's own stream: with ranks as threads of one process sharing a
// device, a device-wide synchronisation (cudaFree, a copy on the legacy default stream) would wait
// for another rank's stream that waits, in a barrier, for this rank's next call.
namespace {
thread_local cudaStream_t t_stream;
}

DeviceHooks CudaHooks(void* stream) {
  t_stream = static_cast<cudaStream_t>(stream);
  DeviceHooks h;
  h.alloc = [](size_t bytes) -> void* {
    void* p = nullptr;
    if (cudaMallocAsync(&p, bytes ? bytes : 1, t_stream) != cudaSuccess) return nullptr;
    return cudaStreamSynchronize(t_stream) == cudaSuccess ? p : nullptr;
  };
  h.release = [](void* p) { cudaFreeAsync(p, t_stream); };
  h.toDevice = [](void* dst, const void* src, size_t bytes) {
    cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, t_stream);
    cudaStreamSynchronize(t_stream);
  };
  h.toHost = [](void* dst, const void* src, size_t bytes) {
    cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, t_stream);
    cudaStreamSynchronize(t_stream);
  };
  h.sync = [](void* s) -> tcclResult_t {
    return cudaStreamSynchronize(static_cast<cudaStream_t>(s)) == cudaSuccess ? tcclSuccess : tcclUnhandledDeviceError;
  };
  h.stream = stream;
  return h;
}

}  // namespace tccl_test
