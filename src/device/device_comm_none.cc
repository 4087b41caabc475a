// Built where CUDA is not (TCCL_ENABLE_CUDA=OFF or no nvcc): host communicators only.
#include "device/device_comm.h"

namespace tccl {

Status CreateDeviceComm(Communicator*, int device, std::unique_ptr<DeviceComm>*) {
  return InvalidUsage("a CUDA communicator was requested (device %d) but this libtccl was built without CUDA "
                      "(TCCL_ENABLE_CUDA=OFF or no nvcc at build time); use TCCL_CUDA_DEVICE=-1 for host memory",
                      device);
}

std::string DeviceSupportSummary() { return "not built (TCCL_ENABLE_CUDA=OFF or no nvcc at build time)"; }

}  // namespace tccl
