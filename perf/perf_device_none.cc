#include "perf/perf_device.h"

namespace perf {

std::unique_ptr<DeviceBuffers> DeviceBuffers::Create(int, size_t, std::string* err) {
  *err = "this tessera-perf was built without CUDA (-D needs TCCL_ENABLE_CUDA)";
  return nullptr;
}

}  // namespace perf
