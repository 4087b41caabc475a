// AVX-512 build of the reduction loops (compiled with -mavx512f -mavx512bw -mf16c and 512-bit
// vectors preferred; only called when the CPU and the OS support AVX-512F and AVX-512BW). The same
// operations as reduce_avx2.cc on twice the lanes, with results bit for bit identical to it and to
// the portable kernels (tests/kernels_test.cc runs every ISA the CPU has): the NaN and signed-zero
// rules use mask registers instead of blends, float16 converts 16 lanes at a time, and bfloat16's
// unpack/pack pairs work within 128-bit lanes exactly as in the AVX2 build.
//
// reduce_avx512_bf16.cc compiles this file again with TCCL_AVX512_BF16_BUILD defined and
// -mavx512dq -mavx512bf16 added (namespace avx512_bf16, for CPUs with both): there bfloat16
// narrows with VCVTNE2PS2BF16 instead of integer rounding; everything else is the same code.
#include <immintrin.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/host/half.h"
#include "kernels/host/reduce.h"

namespace tccl {
#if defined(TCCL_AVX512_BF16_BUILD)
namespace avx512_bf16 {
#else
namespace avx512 {
#endif
namespace {
#include "kernels/host/reduce_loops.inc"

// NaN results become the canonical quiet NaN, as in FloatOps::Canon.
__m512 Canon(__m512 r) {
  return _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(r, r, _CMP_UNORD_Q), _mm512_set1_ps(std::numeric_limits<float>::quiet_NaN()));
}
__m512 VAdd(__m512 a, __m512 b) { return Canon(_mm512_add_ps(a, b)); }
__m512 VMul(__m512 a, __m512 b) { return Canon(_mm512_mul_ps(a, b)); }

// max/min with FloatOps' rules, as in reduce_avx2.cc: equal operands differ at most in the sign of
// zero, so a AND b (max) or a OR b (min) gives the right one; a NaN operand gives the canonical NaN.
// The bitwise ops go through integer vectors (AVX-512F has no float AND/OR without AVX-512DQ).
__m512 AndPs(__m512 a, __m512 b) { return _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(a), _mm512_castps_si512(b))); }
__m512 OrPs(__m512 a, __m512 b) { return _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(a), _mm512_castps_si512(b))); }
__m512d AndPd(__m512d a, __m512d b) { return _mm512_castsi512_pd(_mm512_and_si512(_mm512_castpd_si512(a), _mm512_castpd_si512(b))); }
__m512d OrPd(__m512d a, __m512d b) { return _mm512_castsi512_pd(_mm512_or_si512(_mm512_castpd_si512(a), _mm512_castpd_si512(b))); }

__m512 VMax(__m512 a, __m512 b) {
  const __m512 r = _mm512_mask_mov_ps(_mm512_max_ps(a, b), _mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ), AndPs(a, b));
  return _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(a, b, _CMP_UNORD_Q), _mm512_set1_ps(std::numeric_limits<float>::quiet_NaN()));
}
__m512 VMin(__m512 a, __m512 b) {
  const __m512 r = _mm512_mask_mov_ps(_mm512_min_ps(a, b), _mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ), OrPs(a, b));
  return _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(a, b, _CMP_UNORD_Q), _mm512_set1_ps(std::numeric_limits<float>::quiet_NaN()));
}
__m512d VMaxD(__m512d a, __m512d b) {
  const __m512d r = _mm512_mask_mov_pd(_mm512_max_pd(a, b), _mm512_cmp_pd_mask(a, b, _CMP_EQ_OQ), AndPd(a, b));
  return _mm512_mask_mov_pd(r, _mm512_cmp_pd_mask(a, b, _CMP_UNORD_Q), _mm512_set1_pd(std::numeric_limits<double>::quiet_NaN()));
}
__m512d VMinD(__m512d a, __m512d b) {
  const __m512d r = _mm512_mask_mov_pd(_mm512_min_pd(a, b), _mm512_cmp_pd_mask(a, b, _CMP_EQ_OQ), OrPd(a, b));
  return _mm512_mask_mov_pd(r, _mm512_cmp_pd_mask(a, b, _CMP_UNORD_Q), _mm512_set1_pd(std::numeric_limits<double>::quiet_NaN()));
}

__m512 LoadPs(const float* p) { return _mm512_loadu_ps(p); }
void StorePs(float* p, __m512 v) { _mm512_storeu_ps(p, v); }
__m512d LoadPd(const double* p) { return _mm512_loadu_pd(p); }
void StorePd(double* p, __m512d v) { _mm512_storeu_pd(p, v); }

// bfloat16, 32 at a time: reduce_avx2.cc's widening and rounding on 512-bit vectors. unpacklo/hi
// and packus work within each 128-bit lane, so packing undoes the unpacking's order as there.
__m512 Bf16WidenLo(__m512i v) { return _mm512_castsi512_ps(_mm512_unpacklo_epi16(_mm512_setzero_si512(), v)); }
__m512 Bf16WidenHi(__m512i v) { return _mm512_castsi512_ps(_mm512_unpackhi_epi16(_mm512_setzero_si512(), v)); }
__m512i Bf16Round(__m512 f) {
  const __m512i x = _mm512_castps_si512(f);
  const __m512i odd = _mm512_and_si512(_mm512_srli_epi32(x, 16), _mm512_set1_epi32(1));
  return _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(x, _mm512_set1_epi32(0x7FFF)), odd), 16);
}

#if defined(TCCL_AVX512_BF16_BUILD)
// VCVTNE2PS2BF16 narrows 32 floats in one instruction with FloatToBf16's rounding (nearest even)
// and NaN rule (the top half, quieted), but it reads denormal inputs as zero, where FloatToBf16
// rounds them; a block with a denormal result (sums of tiny values: rare) keeps the integer
// rounding. Measured: bfloat16 sum in cache 53 -> 72 GB/s (docs/kernels.md).
bool AnyDenormal(__m512 lo, __m512 hi) {
  constexpr int kDenormal = 0x20;  // VFPCLASSPS category
  return (_mm512_fpclass_ps_mask(lo, kDenormal) | _mm512_fpclass_ps_mask(hi, kDenormal)) != 0;
}
// The instruction writes lo's 16 results, then hi's; lo and hi hold, in 128-bit lane k, elements
// 8k..8k+3 and 8k+4..8k+7 (the unpacking's order), so one word permutation puts them back.
__m512i Bf16NarrowByInstruction(__m512 lo, __m512 hi) {
  alignas(64) static const uint16_t kOrder[32] = {0, 1, 2,  3,  16, 17, 18, 19, 4,  5,  6,  7,  20, 21, 22, 23,
                                                  8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31};
  return _mm512_permutexvar_epi16(_mm512_load_si512(kOrder), (__m512i)_mm512_cvtne2ps_pbh(hi, lo));
}
#endif

struct Bf16Kernel {
  static constexpr size_t kLanes = 32;
  template <__m512 (*F)(__m512, __m512)>
  static void Block(Unaligned<uint16_t>* d, const Unaligned<uint16_t>* x, const Unaligned<uint16_t>* y) {
    const __m512i va = _mm512_loadu_si512(reinterpret_cast<const void*>(x));
    const __m512i vb = _mm512_loadu_si512(reinterpret_cast<const void*>(y));
    const __m512 lo = F(Bf16WidenLo(va), Bf16WidenLo(vb)), hi = F(Bf16WidenHi(va), Bf16WidenHi(vb));
#if defined(TCCL_AVX512_BF16_BUILD)
    if (__builtin_expect(!AnyDenormal(lo, hi), 1))
      return _mm512_storeu_si512(reinterpret_cast<void*>(d), Bf16NarrowByInstruction(lo, hi));
#endif
    _mm512_storeu_si512(reinterpret_cast<void*>(d), _mm512_packus_epi32(Bf16Round(lo), Bf16Round(hi)));
  }
  static float Widen(uint16_t h) { return Bf16ToFloat(h); }
  static uint16_t Narrow(float f) { return FloatToBf16(f); }
};

// float16, 16 at a time (VCVTPH2PS/VCVTPS2PH on 512 bits: the F16C conversions' rounding and NaNs).
struct HalfKernel {
  static constexpr size_t kLanes = 16;
  template <__m512 (*F)(__m512, __m512)>
  static void Block(Unaligned<uint16_t>* d, const Unaligned<uint16_t>* x, const Unaligned<uint16_t>* y) {
    const __m512 va = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x)));
    const __m512 vb = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(y)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d), _mm512_cvtps_ph(F(va, vb), _MM_FROUND_TO_NEAREST_INT));
  }
  static float Widen(uint16_t h) { return HalfToFloat(h); }
  static uint16_t Narrow(float f) { return FloatToHalf(f); }
};

using Vps = __m512;
using Vpd = __m512d;
#include "kernels/host/vector_loops.inc"

}  // namespace

ReduceFn GetReduce(tcclDataType_t dt, tcclRedOp_t op) { return PickVectorKernel(dt, op); }

}  // namespace avx512 (or avx512_bf16)
}  // namespace tccl
