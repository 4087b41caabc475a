// tccl-cuda-kernel-bench: the device tree-reduce kernel against cudaMemcpy on the same device, in
// one run. Bytes model: a reduction of N inputs of S bytes reads N*S and writes S; a copy of S
// bytes reads S and writes S. Both rates count bytes read plus bytes written (GB/s), so their
// ratio is the fraction of memory bandwidth the kernel reaches (issue #6: goal 85%).
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "kernels/cuda/cuda_kernels.h"
#include "kernels/host/dtype.h"

namespace {

template <typename F>
double Rate(F launch, double bytesPerLaunch) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  for (int i = 0; i < 3; ++i) launch();
  const int reps = 20;
  cudaEventRecord(a);
  for (int i = 0; i < reps; ++i) launch();
  cudaEventRecord(b);
  cudaEventSynchronize(b);
  float ms = 0;
  cudaEventElapsedTime(&ms, a, b);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return bytesPerLaunch * reps / (ms * 1e-3) / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  size_t S = (argc > 1 ? (size_t)atoll(argv[1]) : 64) << 20;  // MiB per input
  int devs = 0;
  if (cudaGetDeviceCount(&devs) != cudaSuccess || devs == 0) {
    printf("tccl-cuda-kernel-bench: no CUDA device\n");
    return 0;
  }
  std::vector<char*> in(9);
  for (auto& p : in) cudaMalloc(reinterpret_cast<void**>(&p), S);
  for (auto p : in) cudaMemset(p, 0x3c, S);  // finite values for every dtype (0x3c3c...)
  double copy = Rate([&] { cudaMemcpyAsync(in[8], in[0], S, cudaMemcpyDeviceToDevice); }, 2.0 * S);
  printf("# %zu MiB per input; cudaMemcpy: %.0f GB/s (read + written)\n", S >> 20, copy);
  printf("# %-9s %-5s %3s %12s %10s\n", "dtype", "op", "N", "GB/s", "of memcpy");
  for (tcclDataType_t dt : {tcclFloat32, tcclBfloat16, tcclFloat16, tcclFloat64, tcclInt32, tcclInt8})
    for (tcclRedOp_t op : {tcclSum, tcclMax})
      for (int n : {2, 4, 8}) {
        tccl::cuda::TreeInputs t{};
        for (int i = 0; i < n; ++i) t.in[i] = in[i];
        size_t count = S / tccl::DtypeSize(dt);
        cudaError_t err = cudaSuccess;
        double r = Rate([&] { err = tccl::cuda::LaunchTreeReduce(t, n, in[8], count, dt, op, n, nullptr); },
                        (double)(n + 1) * S);
        if (err != cudaSuccess) {
          printf("launch failed: %s\n", cudaGetErrorString(err));
          return 1;
        }
        printf("  %-9s %-5s %3d %12.0f %9.0f%%\n", tccl::DtypeName(dt), tccl::OpName(op), n, r, 100 * r / copy);
      }
  for (auto p : in) cudaFree(p);
  return 0;
}
