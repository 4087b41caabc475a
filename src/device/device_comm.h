// The seam between a communicator and its device (CUDA) part. Host code sees only this interface;
// src/device/cuda_*.cc implements it where CUDA is built, device_comm_none.cc where it is not, so
// nothing outside src/device, kernels/cuda and transports/cuda_ipc includes a CUDA header.
#pragma once

#include <memory>

#include "algorithms/schedule.h"
#include "core/status.h"
#include "tccl/tccl.h"

namespace tccl {

class Communicator;

class DeviceComm {
 public:
  virtual ~DeviceComm() = default;
  // The CUDA device ordinal this communicator is bound to.
  virtual int device() const = 0;
  // Enqueues a collective on `stream` (a cudaStream_t; NULL is the legacy default stream) and
  // returns without waiting for it. The caller validated the arguments.
  virtual Status Enqueue(const CollArgs& a, tcclDataType_t dt, const void* send, void* recv, void* stream) = 0;
  // After a failure or an abort: device work of this rank that waits for peers is let through
  // (its results are undefined; the communicator already reports the error). Idempotent.
  virtual void Release() = 0;
  // Whether `p` is memory the device can address (device, managed or registered host memory).
  virtual bool Addressable(const void* p) const = 0;
};

// Creates the device part of `host` (already set up) on `device` (an ordinal or
// TCCL_CUDA_DEVICE_CURRENT). Fails with a clear message where CUDA is not built or no device exists.
Status CreateDeviceComm(Communicator* host, int device, std::unique_ptr<DeviceComm>* out);

// "cuda 13.0, driver 13.0, 1 device" or why there is none; for tccl-info -v and the init log.
std::string DeviceSupportSummary();

}  // namespace tccl
