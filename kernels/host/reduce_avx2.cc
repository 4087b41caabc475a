// AVX2 build of the reduction loops (this file is compiled with -mavx2 -mf16c; it is only called
// when the CPU reports both). float16 uses the F16C conversion instructions, whose rounding
// (nearest-even) and NaN handling match kernels/host/half.h bit for bit (tested).
#include <immintrin.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/host/half.h"
#include "kernels/host/reduce.h"

namespace tccl {
namespace avx2 {
namespace {
#include "kernels/host/reduce_loops.inc"

template <__m256 (*F)(__m256, __m256), float (*Scalar)(float, float)>
void HalfLoop(void* dst, const void* a, const void* b, size_t n) {
  Unaligned<uint16_t>* d = static_cast<Unaligned<uint16_t>*>(dst);
  const Unaligned<uint16_t>* x = static_cast<const Unaligned<uint16_t>*>(a);
  const Unaligned<uint16_t>* y = static_cast<const Unaligned<uint16_t>*>(b);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 va = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(&x[i])));
    __m256 vb = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(&y[i])));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(&d[i]),
                     _mm256_cvtps_ph(F(va, vb), _MM_FROUND_TO_NEAREST_INT));
  }
  for (; i < n; ++i) d[i] = FloatToHalf(Scalar(HalfToFloat(x[i]), HalfToFloat(y[i])));
}

// NaN results become the canonical quiet NaN, as in FloatOps::Canon.
__m256 Canon(__m256 r) {
  return _mm256_blendv_ps(r, _mm256_set1_ps(std::numeric_limits<float>::quiet_NaN()), _mm256_cmp_ps(r, r, _CMP_UNORD_Q));
}
__m256 VAdd(__m256 a, __m256 b) { return Canon(_mm256_add_ps(a, b)); }
__m256 VMul(__m256 a, __m256 b) { return Canon(_mm256_mul_ps(a, b)); }

}  // namespace

ReduceFn GetReduce(tcclDataType_t dt, tcclRedOp_t op) {
  // Sum and prod of halves are the hot path of mixed-precision training; max/min use the generic
  // loop (its NaN/signed-zero rules are awkward in intrinsics and not performance-critical).
  if (dt == tcclFloat16 && (op == tcclSum || op == tcclAvg))
    return &HalfLoop<&VAdd, &FloatOps<float>::Sum>;
  if (dt == tcclFloat16 && op == tcclProd) return &HalfLoop<&VMul, &FloatOps<float>::Prod>;
  return PickGeneric(dt, op);
}

}  // namespace avx2
}  // namespace tccl
