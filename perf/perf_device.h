// Device buffers for `tessera-perf -D N` (a CUDA communicator), behind an interface with no CUDA in
// it: perf_device_cuda.cc implements it where CUDA is built, perf_device_none.cc where it is not.
// Inputs are generated and outputs checked on the host, and copied to and from the device.
#pragma once

#include <memory>
#include <string>

namespace perf {

class DeviceBuffers {
 public:
  // Two device buffers of `bytes` each and a stream on `device`; null with `err` set on failure.
  static std::unique_ptr<DeviceBuffers> Create(int device, size_t bytes, std::string* err);
  virtual ~DeviceBuffers() = default;
  virtual void* send() = 0;
  virtual void* recv() = 0;
  virtual void* stream() = 0;  // the cudaStream_t every measured call is issued on
  virtual void ToDevice(void* dst, const void* src, size_t bytes) = 0;
  virtual void ToHost(void* dst, const void* src, size_t bytes) = 0;
  virtual bool Sync() = 0;  // waits for the stream; false on a device error
  // Device-to-device cudaMemcpy rate over `bytes`, counting bytes read plus bytes written (GB/s).
  virtual double MemcpyGBps(size_t bytes) = 0;
};

}  // namespace perf
