// Tree reductions for the floating-point types, and the entry point that picks the access path.
#include "kernels/cuda/tree_reduce_kernels.cuh"

namespace tccl {
namespace cuda {

using tree_detail::Access;
using tree_detail::LaunchType;

cudaError_t LaunchFloatTree(const TreeInputs& in, int n, void* out, size_t count, tcclDataType_t dt, tcclRedOp_t op,
                            int divisor, Access a, cudaStream_t s) {
  switch (dt) {
    case tcclFloat16: return LaunchType<HalfOps>(in, n, out, count, op, divisor, a, s);
    case tcclBfloat16: return LaunchType<Bf16Ops>(in, n, out, count, op, divisor, a, s);
    case tcclFloat32: return LaunchType<FloatOps<float>>(in, n, out, count, op, divisor, a, s);
    case tcclFloat64: return LaunchType<FloatOps<double>>(in, n, out, count, op, divisor, a, s);
    default: return cudaErrorInvalidValue;
  }
}

namespace {
size_t ElemSize(tcclDataType_t dt) {
  switch (dt) {
    case tcclInt8: case tcclUint8: return 1;
    case tcclFloat16: case tcclBfloat16: return 2;
    case tcclInt32: case tcclUint32: case tcclFloat32: return 4;
    default: return 8;
  }
}
// Postfix form of the canonical tree over [lo, hi) (docs/determinism.md).
void Emit(int lo, int hi, signed char* program, int* length) {
  if (hi - lo == 1) {
    program[(*length)++] = (signed char)lo;
    return;
  }
  int mid = lo + (hi - lo + 1) / 2;
  Emit(lo, mid, program, length);
  Emit(mid, hi, program, length);
  program[(*length)++] = -1;
}

bool IsFloat(tcclDataType_t dt) {
  return dt == tcclFloat16 || dt == tcclBfloat16 || dt == tcclFloat32 || dt == tcclFloat64;
}
}  // namespace

cudaError_t LaunchTreeReduce(const TreeInputs& in, int n, void* out, size_t count, tcclDataType_t dt, tcclRedOp_t op,
                             int divisor, cudaStream_t s) {
  if (count == 0) return cudaSuccess;
  if (n < 1 || n > kMaxTreeInputs || (int)dt < 0 || dt >= tcclNumTypes) return cudaErrorInvalidValue;
  const size_t es = ElemSize(dt);
  TreeInputs withProgram = in;
  withProgram.programLength = 0;
  Emit(0, n, withProgram.program, &withProgram.programLength);
  uintptr_t bits = reinterpret_cast<uintptr_t>(out);
  for (int i = 0; i < n; ++i) bits |= reinterpret_cast<uintptr_t>(in.in[i]);
  Access a = (bits & 15) == 0 ? Access::Packs : (bits & (es - 1)) == 0 ? Access::Elements : Access::Bytes;
  return IsFloat(dt) ? LaunchFloatTree(withProgram, n, out, count, dt, op, divisor, a, s)
                     : LaunchIntegerTree(withProgram, n, out, count, dt, op, divisor, a, s);
}

cudaError_t PreloadTreeKernels() {
  TreeInputs none{};
  for (int t = 0; t < tcclNumTypes; ++t)
    for (tcclRedOp_t op : {tcclSum, tcclProd, tcclMax, tcclMin})
      for (int n = 1; n <= 9; ++n) {  // 9: the run-time rank count variant
        auto dt = (tcclDataType_t)t;
        cudaError_t e = IsFloat(dt) ? LaunchFloatTree(none, n, nullptr, 0, dt, op, n, Access::Preload, nullptr)
                                    : LaunchIntegerTree(none, n, nullptr, 0, dt, op, n, Access::Preload, nullptr);
        if (e != cudaSuccess) return e;
      }
  return cudaSuccess;
}

}  // namespace cuda
}  // namespace tccl
