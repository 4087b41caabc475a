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
// reduce_avx512_fp16.cc compiles it a third time, as the bfloat16 build plus -mavx512fp16
// (namespace avx512_fp16): there float16 sums and products run on float16 lanes, unconverted.
#include <immintrin.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/host/half.h"
#include "kernels/host/reduce.h"

namespace tccl {
#if defined(TCCL_AVX512_FP16_BUILD)
namespace avx512_fp16 {
#elif defined(TCCL_AVX512_BF16_BUILD)
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

// bfloat16, 32 at a time. Widening takes the even and the odd elements apart without shuffles
// (the even ones shifted into the top halves of 32-bit lanes, the odd ones with the even masked
// off), and narrowing puts them back the same way, so the block needs no lane-crossing
// instruction but the one VCVTNE2PS2BF16's output needs (below). Measured against reduce_avx2.cc's
// unpack/pack order on 512 bits: docs/kernels.md.
__m512 Bf16WidenEven(__m512i v) { return _mm512_castsi512_ps(_mm512_slli_epi32(v, 16)); }
__m512 Bf16WidenOdd(__m512i v) {
  return _mm512_castsi512_ps(_mm512_and_si512(v, _mm512_set1_epi32((int)0xFFFF0000u)));
}
// FloatToBf16's rounding in integer lanes (add 0x7FFF plus the lowest kept bit), the result in the
// top 16 bits. Its NaN case is not needed for canonical NaNs (0x7FC00000 rounds to 0x7FC0).
__m512i Bf16RoundTop(__m512 f) {
  const __m512i x = _mm512_castps_si512(f);
  const __m512i odd = _mm512_and_si512(_mm512_srli_epi32(x, 16), _mm512_set1_epi32(1));
  return _mm512_add_epi32(_mm512_add_epi32(x, _mm512_set1_epi32(0x7FFF)), odd);
}
// Even results into the low halves, odd ones kept in the top: VPTERNLOG 0xEC is (A and C) or B.
__m512i Bf16NarrowByRounding(__m512 even, __m512 odd) {
  return _mm512_ternarylogic_epi32(Bf16RoundTop(odd), _mm512_srli_epi32(Bf16RoundTop(even), 16),
                                   _mm512_set1_epi32((int)0xFFFF0000u), 0xEC);
}

// The operations before canonicalisation: a bfloat16 block canonicalises only where it has a NaN.
template <__m512 (*F)(__m512, __m512)>
__m512 RawOp(__m512 a, __m512 b);
template <>
__m512 RawOp<&VAdd>(__m512 a, __m512 b) { return _mm512_add_ps(a, b); }
template <>
__m512 RawOp<&VMul>(__m512 a, __m512 b) { return _mm512_mul_ps(a, b); }

#if defined(TCCL_AVX512_BF16_BUILD)
// VCVTNE2PS2BF16 narrows 32 floats in one instruction with FloatToBf16's rounding (nearest even),
// but it reads denormal inputs as zero, where FloatToBf16 rounds them, and it keeps a NaN's
// payload, where every NaN result must become the canonical one. A block with either (sums of tiny
// values, NaN inputs: rare) takes the integer rounding after Canon instead; one VFPCLASSPS per
// vector finds both. Measured: bfloat16 sum in cache 53 -> 72 GB/s with the instruction
// (2026-11-28); 60-62 -> 87-88 at 32-256 KiB with the even/odd widening, this single check and
// one load per operand (2026-11-29, docs/kernels.md).
bool AnyDenormalOrNaN(__m512 even, __m512 odd) {
  constexpr int kClasses = 0x01 | 0x20 | 0x80;  // VFPCLASSPS categories: quiet NaN, denormal, signalling NaN
  return !_kortestz_mask16_u8(_mm512_fpclass_ps_mask(even, kClasses), _mm512_fpclass_ps_mask(odd, kClasses));
}
// The instruction writes even's 16 results, then odd's; one word permutation interleaves them.
__m512i Bf16NarrowByInstruction(__m512 even, __m512 odd) {
  alignas(64) static const uint16_t kOrder[32] = {0, 16, 1, 17, 2,  18, 3,  19, 4,  20, 5,  21, 6,  22, 7,  23,
                                                  8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31};
  return _mm512_permutexvar_epi16(_mm512_load_si512(kOrder), (__m512i)_mm512_cvtne2ps_pbh(odd, even));
}
#endif

// 32 float32 results (even and odd elements) narrowed to bfloat16 in element order: by the
// instruction where it rounds as FloatToBf16 does, else by the integer rounding, after Canon where
// kCanonicalNaN (a reduction's NaN results are canonical; a division keeps the element's NaN).
template <bool kCanonicalNaN>
__m512i Bf16Narrow(__m512 even, __m512 odd) {
#if defined(TCCL_AVX512_BF16_BUILD)
  if (__builtin_expect(!AnyDenormalOrNaN(even, odd), 1)) return Bf16NarrowByInstruction(even, odd);
#endif
  return kCanonicalNaN ? Bf16NarrowByRounding(Canon(even), Canon(odd)) : Bf16NarrowByRounding(even, odd);
}

struct Bf16Kernel {
  static constexpr size_t kLanes = 32;
  template <__m512 (*F)(__m512, __m512)>
  static void Block(Unaligned<uint16_t>* d, const Unaligned<uint16_t>* x, const Unaligned<uint16_t>* y) {
    __m512i va = _mm512_loadu_si512(reinterpret_cast<const void*>(x));
    __m512i vb = _mm512_loadu_si512(reinterpret_cast<const void*>(y));
    // One load per operand: GCC otherwise folds the load into both the shift and the mask, and
    // the doubled loads cost where the operand is a peer's line still in flight (measured: the
    // 4-rank bfloat16 reduce at 256 KiB-1 MiB, docs/kernels.md).
    asm("" : "+v"(va), "+v"(vb));
    const __m512 even = RawOp<F>(Bf16WidenEven(va), Bf16WidenEven(vb));
    const __m512 odd = RawOp<F>(Bf16WidenOdd(va), Bf16WidenOdd(vb));
    _mm512_storeu_si512(reinterpret_cast<void*>(d), Bf16Narrow<true>(even, odd));
  }
  // avg's division in place. A quotient is NaN only where the element is, and then it is that
  // NaN quieted, whose low 16 bits are zero, so both narrowings keep its top half as FloatToBf16
  // does; only the instruction's flushed denormals send a block to the integer rounding.
  static constexpr size_t kDivideLanes = 32;
  template <typename Scale>
  static void ScaleBlock(Unaligned<uint16_t>* d, Scale scale) {
    const __m512i v = _mm512_loadu_si512(reinterpret_cast<const void*>(d));
    _mm512_storeu_si512(reinterpret_cast<void*>(d), Bf16Narrow<false>(scale(Bf16WidenEven(v)), scale(Bf16WidenOdd(v))));
  }
  static float Widen(uint16_t h) { return Bf16ToFloat(h); }
  static uint16_t Narrow(float f) { return FloatToBf16(f); }
  using Bits = Bf16Bits;
};

// avg's division of float16, 16 at a time, by conversion in every AVX-512 build (the float16
// lanes' VDIVPH would match only for divisors float16 holds exactly).
template <typename Scale>
void HalfScaleBlock(Unaligned<uint16_t>* d, Scale scale) {
  const __m512 v = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(d)));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(d), _mm512_cvtps_ph(scale(v), _MM_FROUND_TO_NEAREST_INT));
}

#if defined(TCCL_AVX512_FP16_BUILD)
// float16 natively, 32 at a time (AVX512-FP16): VADDPH and VMULPH round the exact result once to
// float16. That is what widening, operating in float32 and narrowing gives: a product of two
// float16 values is exact in float32, and a sum rounded first to float32 (24 bits) and then to
// float16 (11) rounds as if once, since 24 >= 2 x 11 + 2 (double rounding is innocuous for +, -,
// x and / then; Figueroa 1995), and float16's range lies inside float32's normal range, so no
// float32 step flushes or underflows. tests/kernels_test.cc checks every pair of values. Measured
// at 32 KiB: the sum 71 -> 112 GB/s out of place, 71 -> 170 in place (docs/kernels.md).
__m512h CanonPh(__m512h r) {
  return _mm512_castsi512_ph(_mm512_mask_mov_epi16(_mm512_castph_si512(r), _mm512_cmp_ph_mask(r, r, _CMP_UNORD_Q),
                                                   _mm512_set1_epi16((short)HalfBits::kQuietNaN)));
}
// The float16 operation standing for each float32 one Pick16Bit asks for (max and min never come
// here: Ordered16Loop does them on the bits).
template <__m512 (*F)(__m512, __m512)>
__m512h HalfOp(__m512h a, __m512h b);
template <>
__m512h HalfOp<&VAdd>(__m512h a, __m512h b) { return CanonPh(_mm512_add_ph(a, b)); }
template <>
__m512h HalfOp<&VMul>(__m512h a, __m512h b) { return CanonPh(_mm512_mul_ph(a, b)); }

struct HalfKernel {
  static constexpr size_t kLanes = 32;
  template <__m512 (*F)(__m512, __m512)>
  static void Block(Unaligned<uint16_t>* d, const Unaligned<uint16_t>* x, const Unaligned<uint16_t>* y) {
    _mm512_storeu_ph(reinterpret_cast<void*>(d), HalfOp<F>(_mm512_loadu_ph(reinterpret_cast<const void*>(x)),
                                                           _mm512_loadu_ph(reinterpret_cast<const void*>(y))));
  }
#else
// float16, 16 at a time (VCVTPH2PS/VCVTPS2PH on 512 bits: the F16C conversions' rounding and NaNs).
struct HalfKernel {
  static constexpr size_t kLanes = 16;
  template <__m512 (*F)(__m512, __m512)>
  static void Block(Unaligned<uint16_t>* d, const Unaligned<uint16_t>* x, const Unaligned<uint16_t>* y) {
    const __m512 va = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x)));
    const __m512 vb = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(y)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d), _mm512_cvtps_ph(F(va, vb), _MM_FROUND_TO_NEAREST_INT));
  }
#endif
  static constexpr size_t kDivideLanes = 16;
  template <typename Scale>
  static void ScaleBlock(Unaligned<uint16_t>* d, Scale scale) { HalfScaleBlock(d, scale); }
  static float Widen(uint16_t h) { return HalfToFloat(h); }
  static uint16_t Narrow(float f) { return FloatToHalf(f); }
  using Bits = HalfBits;
};

// 16-bit float max/min on the bits, as in reduce_avx2.cc (vector_loops.inc's Ordered16Loop), but
// choosing each result by a compare mask instead of turning the larger key back: one instruction
// fewer, measured 88 -> 105 GB/s in place at 32 KiB (the same swap in the AVX2 build, compare and
// VPBLENDVB, was 5% slower there).
using Vi = __m512i;
__m512i LoadSi(const Unaligned<uint16_t>* p) { return _mm512_loadu_si512(reinterpret_cast<const void*>(p)); }
void StoreSi(Unaligned<uint16_t>* p, __m512i v) { _mm512_storeu_si512(reinterpret_cast<void*>(p), v); }
// x ^ (sign(x) & 0x7FFF) in one VPTERNLOG (0x78: A xor (B and C)).
__m512i OrderKey16(__m512i x) {
  return _mm512_ternarylogic_epi32(x, _mm512_srai_epi16(x, 15), _mm512_set1_epi16(0x7FFF), 0x78);
}
template <bool kMax>
__m512i Ordered16(__m512i a, __m512i b, uint16_t infinity, uint16_t quiet_nan) {
  const __m512i ka = OrderKey16(a), kb = OrderKey16(b);
  const __mmask32 pick_a = kMax ? _mm512_cmpgt_epi16_mask(ka, kb) : _mm512_cmplt_epi16_mask(ka, kb);
  const __m512i r = _mm512_mask_mov_epi16(b, pick_a, a);
  const __m512i magnitude = _mm512_set1_epi16(0x7FFF);
  const __m512i widest = _mm512_max_epu16(_mm512_and_si512(a, magnitude), _mm512_and_si512(b, magnitude));
  return _mm512_mask_mov_epi16(r, _mm512_cmpgt_epu16_mask(widest, _mm512_set1_epi16((short)infinity)),
                               _mm512_set1_epi16((short)quiet_nan));
}

using Vps = __m512;
using Vpd = __m512d;
#include "kernels/host/vector_loops.inc"

}  // namespace

ReduceFn GetReduce(tcclDataType_t dt, tcclRedOp_t op) { return PickVectorKernel(dt, op); }
DivideFn GetDivide(tcclDataType_t dt) { return PickVectorDivide(dt); }

}  // namespace avx512 (or avx512_bf16, avx512_fp16)
}  // namespace tccl
