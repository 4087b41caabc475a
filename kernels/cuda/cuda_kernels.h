// Device reduce and copy kernels (kernels/cuda/*.cu), callable from host C++.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "tccl/tccl.h"

namespace tccl {
namespace cuda {

// The most inputs one tree reduction takes: ranks of one communicator on one host.
constexpr int kMaxTreeInputs = 64;

struct TreeInputs {
  const void* in[kMaxTreeInputs];
  // The canonical tree for n inputs in postfix form (filled by LaunchTreeReduce): entry >= 0
  // pushes input i, -1 pops two and pushes their combination. For the kernels that take n at run
  // time (device recursion would need an unbounded stack).
  signed char program[2 * kMaxTreeInputs];
  int programLength;
};

// out[i] = the canonical tree (docs/determinism.md) over in[0..n)[i], for i < count; with avg, the
// tree's sum divided once by `divisor`. Any alignment; out may equal one of the inputs.
cudaError_t LaunchTreeReduce(const TreeInputs& in, int n, void* out, size_t count, tcclDataType_t dt, tcclRedOp_t op,
                             int divisor, cudaStream_t stream);

// Makes CUDA load every tree-reduce kernel now. Under lazy loading (the CUDA 12+ default) the first
// launch of a kernel loads it, which waits for the whole context to go idle: with ranks as threads
// sharing a context, one rank's first launch would wait for another rank's stream, which waits in
// a barrier for this rank. Called once per process when the first CUDA communicator is created.
cudaError_t PreloadTreeKernels();

}  // namespace cuda
}  // namespace tccl
