#include <cuda_runtime_api.h>

#include "perf/perf_device.h"

namespace perf {

namespace {

class CudaBuffers : public DeviceBuffers {
 public:
  ~CudaBuffers() override {
    cudaFree(send_);
    cudaFree(recv_);
    if (stream_) cudaStreamDestroy(stream_);
  }
  void* send() override { return send_; }
  void* recv() override { return recv_; }
  void* stream() override { return stream_; }
  void ToDevice(void* dst, const void* src, size_t bytes) override {
    cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream_);
    cudaStreamSynchronize(stream_);
  }
  void ToHost(void* dst, const void* src, size_t bytes) override {
    cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream_);
    cudaStreamSynchronize(stream_);
  }
  bool Sync() override { return cudaStreamSynchronize(stream_) == cudaSuccess; }
  double MemcpyGBps(size_t bytes) override {
    if (bytes > bytes_) bytes = bytes_;
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    for (int i = 0; i < 3; ++i) cudaMemcpyAsync(recv_, send_, bytes, cudaMemcpyDeviceToDevice, stream_);
    const int reps = 20;
    cudaEventRecord(a, stream_);
    for (int i = 0; i < reps; ++i) cudaMemcpyAsync(recv_, send_, bytes, cudaMemcpyDeviceToDevice, stream_);
    cudaEventRecord(b, stream_);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return ms > 0 ? 2.0 * bytes * reps / (ms * 1e-3) / 1e9 : 0;
  }

  void* send_ = nullptr;
  void* recv_ = nullptr;
  cudaStream_t stream_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace

std::unique_ptr<DeviceBuffers> DeviceBuffers::Create(int device, size_t bytes, std::string* err) {
  auto b = std::make_unique<CudaBuffers>();
  b->bytes_ = bytes;
  cudaError_t e = cudaSetDevice(device);
  if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&b->stream_, cudaStreamNonBlocking);
  if (e == cudaSuccess) e = cudaMalloc(&b->send_, bytes);
  if (e == cudaSuccess) e = cudaMalloc(&b->recv_, bytes);
  if (e != cudaSuccess) {
    *err = std::string("CUDA device ") + std::to_string(device) + ": " + cudaGetErrorString(e);
    return nullptr;
  }
  return b;
}

}  // namespace perf
