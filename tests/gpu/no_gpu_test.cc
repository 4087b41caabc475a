// Runs on every machine: what a CUDA communicator request does where it cannot be served.
#include <gtest/gtest.h>

#include <string>

#include "tccl/tccl.h"
#ifdef TCCL_TEST_HAVE_CUDA
#include "tests/gpu/gpu_support.h"
#endif

namespace tccl_test {
namespace {

// Without a usable device (or without CUDA in the build), asking for a CUDA communicator is a clear
// error, and host communicators keep working.
TEST(NoGpu, CudaCommunicatorRequestFailsClearlyAndHostStillWorks) {
#ifdef TCCL_TEST_HAVE_CUDA
  std::string why;
  if (GpuAvailable(&why)) GTEST_SKIP() << "a GPU is present: covered by the gpu tests";
#endif
  tcclComm_t comm = nullptr;
  int dev = 0;
  EXPECT_NE(tcclSuccess, tcclCommInitAll(&comm, 1, &dev));
  std::string msg = tcclGetLastError(nullptr);
  EXPECT_TRUE(msg.find("CUDA") != std::string::npos) << msg;
  ASSERT_EQ(tcclSuccess, tcclCommInitAll(&comm, 1, nullptr)) << tcclGetLastError(nullptr);
  int d = 5;
  EXPECT_EQ(tcclSuccess, tcclCommCuDevice(comm, &d));
  EXPECT_EQ(d, -1);
  float x = 2;
  EXPECT_EQ(tcclSuccess, tcclAllReduce(&x, &x, 1, tcclFloat32, tcclSum, comm, nullptr));
  EXPECT_EQ(tcclSuccess, tcclCommDestroy(comm));
}

}  // namespace
}  // namespace tccl_test
