// The device tree reduction (templates; instantiated by reduce_kernels_*.cu): every output element is the canonical tree over the N inputs'
// elements (docs/determinism.md), evaluated by one thread, so the result is independent of the
// grid, the block size and the element's position. Three access paths, chosen per call from the
// pointers' alignment, compute the same function:
//  - packs: every pointer 16-byte aligned: each thread loads one 16-byte pack per input (the
//    widest load), reduces its 16/sizeof(T) elements, stores one pack;
//  - elements: every pointer aligned to the element size: one element per load;
//  - bytes: anything else (tccl accepts any address, as the host path does): byte loads.
#pragma once

#include <cstring>

#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/device_ops.cuh"

namespace tccl {
namespace cuda {

namespace tree_detail {

// Preload: launch nothing, only make CUDA load the kernels (see PreloadTreeKernels).
enum class Access { Packs, Elements, Bytes, Preload };

template <typename T>
__device__ __forceinline__ T LoadBytes(const unsigned char* p) {
  T v;
  memcpy(&v, p, sizeof(T));
  return v;
}

template <class Ops, OpKind K, int N>
__device__ __forceinline__ typename Ops::Store ReduceOne(typename Ops::Store* v, const TreeInputs& in, bool avg,
                                                         int divisor) {
  using B = Bin<Ops, K>;
  typename Ops::Store r;
  if constexpr (N > 0) r = Tree<B, 0, N>(v);
  else r = TreeProgram<B>(v, in.program, in.programLength);
  return avg ? Ops::Divide(r, divisor) : r;
}

// Packs of 16 bytes: N > 0 is the rank count at compile time (1..8, values in registers); N == 0
// takes n at run time (more ranks on one host than that).
template <class Ops, OpKind K, int N>
__global__ void __launch_bounds__(512) TreeReducePacks(TreeInputs in, int n, void* out, size_t count, bool avg, int divisor) {
  using T = typename Ops::Store;
  constexpr int kCap = N > 0 ? N : kMaxTreeInputs;
  constexpr int kPer = 16 / sizeof(T);
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  const size_t packs = count / kPer;
  for (size_t p = (size_t)blockIdx.x * blockDim.x + threadIdx.x; p < packs; p += stride) {
    uint4 raw[kCap];
#pragma unroll
    for (int i = 0; i < kCap; ++i)
      if (N > 0 || i < n) raw[i] = static_cast<const uint4*>(in.in[i])[p];
    uint4 res;
    T* r = reinterpret_cast<T*>(&res);
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
      T v[kCap];
#pragma unroll
      for (int i = 0; i < kCap; ++i)
        if (N > 0 || i < n) v[i] = reinterpret_cast<const T*>(&raw[i])[k];
      r[k] = ReduceOne<Ops, K, N>(v, in, avg, divisor);
    }
    static_cast<uint4*>(out)[p] = res;
  }
}

// Element by element from `first` on: the tail after the packs, and buffers that are not 16-byte
// aligned (`aligned`: every pointer aligned to the element size; otherwise byte loads).
template <class Ops, OpKind K>
__global__ void __launch_bounds__(512) TreeReduceElements(TreeInputs in, int n, void* out, size_t first, size_t count, bool avg, int divisor,
                                   bool aligned) {
  using T = typename Ops::Store;
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t e = first + (size_t)blockIdx.x * blockDim.x + threadIdx.x; e < count; e += stride) {
    T v[kMaxTreeInputs];
    for (int i = 0; i < n; ++i)
      v[i] = aligned ? static_cast<const T*>(in.in[i])[e]
                     : LoadBytes<T>(static_cast<const unsigned char*>(in.in[i]) + e * sizeof(T));
    T r = ReduceOne<Ops, K, 0>(v, in, avg, divisor);
    if (aligned) static_cast<T*>(out)[e] = r;
    else memcpy(static_cast<unsigned char*>(out) + e * sizeof(T), &r, sizeof(T));
  }
}

// Enough blocks to fill the device with a few waves; grid-stride loops do the rest, so the grid
// shape never changes what a thread computes.
inline unsigned GridFor(size_t items) {
  static int sms = [] {
    int dev = 0, v = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, dev);
    return v > 0 ? v : 16;
  }();
  size_t blocks = (items + 511) / 512;
  size_t cap = (size_t)sms * 8;
  return (unsigned)(blocks < 1 ? 1 : blocks > cap ? cap : blocks);
}

template <class Ops, OpKind K, int N>
cudaError_t LaunchN(const TreeInputs& in, int n, void* out, size_t count, bool avg, int divisor, Access a,
                    cudaStream_t s) {
  using T = typename Ops::Store;
  constexpr size_t kPer = 16 / sizeof(T);
  if (a == Access::Preload) {
    cudaFuncAttributes attr;
    cudaFuncGetAttributes(&attr, TreeReducePacks<Ops, K, N>);
    cudaFuncGetAttributes(&attr, TreeReduceElements<Ops, K>);
    return cudaGetLastError();
  }
  size_t first = 0;
  if (a == Access::Packs && count >= kPer) {
    TreeReducePacks<Ops, K, N><<<GridFor(count / kPer), 512, 0, s>>>(in, n, out, count, avg, divisor);
    first = count / kPer * kPer;
  }
  if (first < count)
    TreeReduceElements<Ops, K><<<GridFor(count - first), 512, 0, s>>>(in, n, out, first, count, avg, divisor,
                                                                         a != Access::Bytes);
  return cudaGetLastError();
}

template <class Ops, OpKind K>
cudaError_t LaunchOp(const TreeInputs& in, int n, void* out, size_t count, bool avg, int divisor, Access a,
                     cudaStream_t s) {
  switch (n) {
    case 1: return LaunchN<Ops, K, 1>(in, n, out, count, avg, divisor, a, s);
    case 2: return LaunchN<Ops, K, 2>(in, n, out, count, avg, divisor, a, s);
    case 3: return LaunchN<Ops, K, 3>(in, n, out, count, avg, divisor, a, s);
    case 4: return LaunchN<Ops, K, 4>(in, n, out, count, avg, divisor, a, s);
    case 5: return LaunchN<Ops, K, 5>(in, n, out, count, avg, divisor, a, s);
    case 6: return LaunchN<Ops, K, 6>(in, n, out, count, avg, divisor, a, s);
    case 7: return LaunchN<Ops, K, 7>(in, n, out, count, avg, divisor, a, s);
    case 8: return LaunchN<Ops, K, 8>(in, n, out, count, avg, divisor, a, s);
    default: return LaunchN<Ops, K, 0>(in, n, out, count, avg, divisor, a, s);
  }
}

template <class Ops>
cudaError_t LaunchType(const TreeInputs& in, int n, void* out, size_t count, tcclRedOp_t op, int divisor, Access a,
                       cudaStream_t s) {
  switch (op) {
    case tcclSum: return LaunchOp<Ops, OpKind::Sum>(in, n, out, count, false, divisor, a, s);
    case tcclAvg: return LaunchOp<Ops, OpKind::Sum>(in, n, out, count, true, divisor, a, s);
    case tcclProd: return LaunchOp<Ops, OpKind::Prod>(in, n, out, count, false, divisor, a, s);
    case tcclMax: return LaunchOp<Ops, OpKind::Max>(in, n, out, count, false, divisor, a, s);
    case tcclMin: return LaunchOp<Ops, OpKind::Min>(in, n, out, count, false, divisor, a, s);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace tree_detail

// One dtype group's dispatch, defined in reduce_kernels_int.cu and reduce_kernels_float.cu (two
// translation units so that the build compiles them in parallel).
cudaError_t LaunchIntegerTree(const TreeInputs& in, int n, void* out, size_t count, tcclDataType_t dt, tcclRedOp_t op,
                              int divisor, tree_detail::Access a, cudaStream_t s);
cudaError_t LaunchFloatTree(const TreeInputs& in, int n, void* out, size_t count, tcclDataType_t dt, tcclRedOp_t op,
                            int divisor, tree_detail::Access a, cudaStream_t s);

}  // namespace cuda
}  // namespace tccl
