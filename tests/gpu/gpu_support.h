// Shared by the gpu-labelled tests: whether a GPU is usable, and the device hooks for RunSweep.
#pragma once

#include <string>

#include "tests/support/sweep.h"

namespace tccl_test {

// True where a CUDA device is usable; otherwise `why` says what is missing (the tests skip with it).
bool GpuAvailable(std::string* why);
// Hooks over cudaMalloc / cudaMemcpy and `stream` (a cudaStream_t).
DeviceHooks CudaHooks(void* stream);

#define TCCL_REQUIRE_GPU()                                                        \
  do {                                                                          \
    std::string why_;                                                           \
    if (!::tccl_test::GpuAvailable(&why_)) GTEST_SKIP() << "no GPU: " << why_;  \
  } while (0)

}  // namespace tccl_test
