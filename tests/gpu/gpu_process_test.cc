// gpu-labelled, ranks as processes sharing one device (CUDA IPC between address spaces), run as
// `tessera-run -n N gpu_process_test [--split-hosts]`. With --split-hosts every rank claims its own
// host (TCCL_HOST_ID), so the communicator stages device data through host memory and TCP: the
// path a CUDA communicator spanning machines takes. Skips (exit 0, message) without a GPU.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "tests/gpu/gpu_support.h"

namespace tccl_test {
namespace {

bool g_splitHosts = false;

TEST(GpuProcessRanks, EveryCollectiveDtypeOpInAndOutOfPlace) {
  TCCL_REQUIRE_GPU();
  if (g_splitHosts) setenv("TCCL_HOST_ID", (std::string("gpu-host-") + getenv("RANK")).c_str(), 1);
  tcclConfig_t config = TCCL_CONFIG_INITIALIZER;
  config.cudaDevice = 0;
  tcclComm_t comm = nullptr;
  ASSERT_EQ(tcclSuccess, tcclCommInitFromEnv(&comm, &config)) << tcclGetLastError(nullptr);
  cudaStream_t stream;
  ASSERT_EQ(cudaSuccess, cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  DeviceHooks hooks = CudaHooks(stream);
  SweepOptions opt;
  opt.device = &hooks;
  opt.expectCanonical = true;
  opt.colls = {"all_reduce", "reduce_scatter", "all_gather", "broadcast", "reduce", "alltoall"};
  if (g_splitHosts) opt.types = {tcclFloat32, tcclBfloat16, tcclInt64, tcclUint8};
  std::vector<std::string> failures = RunSweep(comm, opt);
  int rank = -1;
  tcclCommUserRank(comm, &rank);
  for (size_t i = 0; i < failures.size() && i < 10; ++i) ADD_FAILURE() << "rank " << rank << ": " << failures[i];
  EXPECT_EQ(tcclSuccess, tcclCommDestroy(comm));
  cudaStreamDestroy(stream);
}

}  // namespace
}  // namespace tccl_test

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--split-hosts") tccl_test::g_splitHosts = true;
  const char* rank = getenv("RANK");
  if (rank && std::string(rank) != "0") {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  return RUN_ALL_TESTS();
}
