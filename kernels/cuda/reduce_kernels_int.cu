// Tree reductions for the integer types.
#include "kernels/cuda/tree_reduce_kernels.cuh"

namespace tccl {
namespace cuda {

using tree_detail::Access;
using tree_detail::LaunchType;

cudaError_t LaunchIntegerTree(const TreeInputs& in, int n, void* out, size_t count, tcclDataType_t dt, tcclRedOp_t op,
                              int divisor, Access a, cudaStream_t s) {
  switch (dt) {
    case tcclInt8: return LaunchType<IntOps<int8_t>>(in, n, out, count, op, divisor, a, s);
    case tcclUint8: return LaunchType<IntOps<uint8_t>>(in, n, out, count, op, divisor, a, s);
    case tcclInt32: return LaunchType<IntOps<int32_t>>(in, n, out, count, op, divisor, a, s);
    case tcclUint32: return LaunchType<IntOps<uint32_t>>(in, n, out, count, op, divisor, a, s);
    case tcclInt64: return LaunchType<IntOps<int64_t>>(in, n, out, count, op, divisor, a, s);
    case tcclUint64: return LaunchType<IntOps<uint64_t>>(in, n, out, count, op, divisor, a, s);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace cuda
}  // namespace tccl
