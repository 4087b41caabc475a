#include "device/cuda_util.h"

#include <string>

#include "device/device_comm.h"

namespace tccl {

Status CudaStatus(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return Status::Ok();
  cudaGetLastError();  // clear the sticky-free error so later calls are not blamed for it
  return DeviceError("%s failed: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
}

bool Capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
  return cudaStreamIsCapturing(stream, &st) == cudaSuccess && st != cudaStreamCaptureStatusNone;
}

std::string DeviceSupportSummary() {
  int runtime = 0, driver = 0, count = 0;
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);
  std::string s = "built (runtime " + std::to_string(runtime / 1000) + "." + std::to_string(runtime % 1000 / 10);
  if (driver == 0) return s + "; no CUDA driver on this machine)";
  s += ", driver " + std::to_string(driver / 1000) + "." + std::to_string(driver % 1000 / 10);
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return s + "; no usable device: " + cudaGetErrorString(e) + ")";
  }
  return s + "; " + std::to_string(count) + " device" + (count == 1 ? "" : "s") + ")";
}

}  // namespace tccl
