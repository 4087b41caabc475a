// AVX2 build of the reduction loops (this file is compiled with -mavx2 -mf16c; it is only called
// when the CPU reports both). float16 uses the F16C conversion instructions, whose rounding
// (nearest-even) and NaN handling match kernels/host/half.h bit for bit; bfloat16 narrows with
// integer lanes that do what FloatToBf16 does; float max/min reproduce FloatOps' rules for signed
// zeros and NaN (all tested bit for bit against the portable kernels' reference semantics).
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

// NaN results become the canonical quiet NaN, as in FloatOps::Canon.
__m256 Canon(__m256 r) {
  return _mm256_blendv_ps(r, _mm256_set1_ps(std::numeric_limits<float>::quiet_NaN()), _mm256_cmp_ps(r, r, _CMP_UNORD_Q));
}
__m256 VAdd(__m256 a, __m256 b) { return Canon(_mm256_add_ps(a, b)); }
__m256 VMul(__m256 a, __m256 b) { return Canon(_mm256_mul_ps(a, b)); }

// max/min with FloatOps' rules. VMAXPS/VMINPS alone return the second operand when the operands
// are equal (so max(+0, -0) would depend on the order) or when either is NaN. Equal operands differ
// at most in the sign of zero: a AND b has the sign only if both do (max prefers +0), a OR b if
// either does (min prefers -0). A NaN in either operand gives the canonical NaN.
__m256 VMax(__m256 a, __m256 b) {
  __m256 r = _mm256_blendv_ps(_mm256_max_ps(a, b), _mm256_and_ps(a, b), _mm256_cmp_ps(a, b, _CMP_EQ_OQ));
  return _mm256_blendv_ps(r, _mm256_set1_ps(std::numeric_limits<float>::quiet_NaN()), _mm256_cmp_ps(a, b, _CMP_UNORD_Q));
}
__m256 VMin(__m256 a, __m256 b) {
  __m256 r = _mm256_blendv_ps(_mm256_min_ps(a, b), _mm256_or_ps(a, b), _mm256_cmp_ps(a, b, _CMP_EQ_OQ));
  return _mm256_blendv_ps(r, _mm256_set1_ps(std::numeric_limits<float>::quiet_NaN()), _mm256_cmp_ps(a, b, _CMP_UNORD_Q));
}
__m256d VMaxD(__m256d a, __m256d b) {
  __m256d r = _mm256_blendv_pd(_mm256_max_pd(a, b), _mm256_and_pd(a, b), _mm256_cmp_pd(a, b, _CMP_EQ_OQ));
  return _mm256_blendv_pd(r, _mm256_set1_pd(std::numeric_limits<double>::quiet_NaN()), _mm256_cmp_pd(a, b, _CMP_UNORD_Q));
}
__m256d VMinD(__m256d a, __m256d b) {
  __m256d r = _mm256_blendv_pd(_mm256_min_pd(a, b), _mm256_or_pd(a, b), _mm256_cmp_pd(a, b, _CMP_EQ_OQ));
  return _mm256_blendv_pd(r, _mm256_set1_pd(std::numeric_limits<double>::quiet_NaN()), _mm256_cmp_pd(a, b, _CMP_UNORD_Q));
}

// float32 and float64 max/min: the compiler does not vectorise FloatOps' branches.
__m256 LoadPs(const float* p) { return _mm256_loadu_ps(p); }
void StorePs(float* p, __m256 v) { _mm256_storeu_ps(p, v); }
__m256d LoadPd(const double* p) { return _mm256_loadu_pd(p); }
void StorePd(double* p, __m256d v) { _mm256_storeu_pd(p, v); }

// 16-bit floats: widen exactly to float32, operate, round back once (Pick16Bit in vector_loops.inc).

// bfloat16 is the top half of a float32, 16 at a time. Widening is interleaving with zeros
// (unpacklo/hi put elements 0-3, 8-11 and 4-7, 12-15 in the top halves of 32-bit lanes); narrowing
// is FloatToBf16's rounding in integer lanes (add 0x7FFF plus the lowest kept bit, keep the top 16
// bits), and packing the two halves back with packus restores the order the unpacks took apart.
// FloatToBf16's NaN case is not needed: the values narrowed here are results of VAdd/VMul/VMax/VMin,
// whose only NaN is the canonical 0x7FC00000, which this rounding maps to 0x7FC0 as FloatToBf16 does.
__m256 Bf16WidenLo(__m256i v) { return _mm256_castsi256_ps(_mm256_unpacklo_epi16(_mm256_setzero_si256(), v)); }
__m256 Bf16WidenHi(__m256i v) { return _mm256_castsi256_ps(_mm256_unpackhi_epi16(_mm256_setzero_si256(), v)); }
__m256i Bf16Round(__m256 f) {
  const __m256i x = _mm256_castps_si256(f);
  const __m256i odd = _mm256_and_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(1));
  return _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(x, _mm256_set1_epi32(0x7FFF)), odd), 16);
}

struct Bf16Kernel {
  static constexpr size_t kLanes = 16;
  template <__m256 (*F)(__m256, __m256)>
  static void Block(Unaligned<uint16_t>* d, const Unaligned<uint16_t>* x, const Unaligned<uint16_t>* y) {
    const __m256i va = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x));
    const __m256i vb = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y));
    const __m256 lo = F(Bf16WidenLo(va), Bf16WidenLo(vb)), hi = F(Bf16WidenHi(va), Bf16WidenHi(vb));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d), _mm256_packus_epi32(Bf16Round(lo), Bf16Round(hi)));
  }
  // avg's division in place. A quotient is NaN only where the element is, and then it is that
  // NaN quieted, whose low 16 bits are zero: the integer rounding keeps its top half, as
  // FloatToBf16 does, so no NaN case is needed here either.
  static constexpr size_t kDivideLanes = 16;
  template <typename Scale>
  static void ScaleBlock(Unaligned<uint16_t>* d, Scale scale) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(d));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d),
                        _mm256_packus_epi32(Bf16Round(scale(Bf16WidenLo(v))), Bf16Round(scale(Bf16WidenHi(v)))));
  }
  static float Widen(uint16_t h) { return Bf16ToFloat(h); }
  static uint16_t Narrow(float f) { return FloatToBf16(f); }
  using Bits = Bf16Bits;
};

// float16, 8 at a time, through F16C (nearest-even, NaN handling as half.h).
struct HalfKernel {
  static constexpr size_t kLanes = 8;
  template <__m256 (*F)(__m256, __m256)>
  static void Block(Unaligned<uint16_t>* d, const Unaligned<uint16_t>* x, const Unaligned<uint16_t>* y) {
    const __m256 va = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x)));
    const __m256 vb = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(y)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d), _mm256_cvtps_ph(F(va, vb), _MM_FROUND_TO_NEAREST_INT));
  }
  // avg's division in place (the conversions keep NaNs as half.h does).
  static constexpr size_t kDivideLanes = 8;
  template <typename Scale>
  static void ScaleBlock(Unaligned<uint16_t>* d, Scale scale) {
    const __m256 v = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(d)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d), _mm256_cvtps_ph(scale(v), _MM_FROUND_TO_NEAREST_INT));
  }
  static float Widen(uint16_t h) { return HalfToFloat(h); }
  static uint16_t Narrow(float f) { return FloatToHalf(f); }
  using Bits = HalfBits;
};

// 16-bit float max/min on the bits (vector_loops.inc's Ordered16Loop says why this is exact).
using Vi = __m256i;
__m256i LoadSi(const Unaligned<uint16_t>* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
void StoreSi(Unaligned<uint16_t>* p, __m256i v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }
// x with its magnitude bits flipped where it is negative: an involution.
__m256i OrderKey16(__m256i x) {
  return _mm256_xor_si256(x, _mm256_and_si256(_mm256_srai_epi16(x, 15), _mm256_set1_epi16(0x7FFF)));
}
template <bool kMax>
__m256i Ordered16(__m256i a, __m256i b, uint16_t infinity, uint16_t quiet_nan) {
  const __m256i ka = OrderKey16(a), kb = OrderKey16(b);
  const __m256i r = OrderKey16(kMax ? _mm256_max_epi16(ka, kb) : _mm256_min_epi16(ka, kb));
  const __m256i magnitude = _mm256_set1_epi16(0x7FFF);
  const __m256i widest = _mm256_max_epi16(_mm256_and_si256(a, magnitude), _mm256_and_si256(b, magnitude));
  const __m256i nan = _mm256_cmpgt_epi16(widest, _mm256_set1_epi16((short)infinity));  // both sides below 0x8000
  return _mm256_blendv_epi8(r, _mm256_set1_epi16((short)quiet_nan), nan);
}

using Vps = __m256;
using Vpd = __m256d;
#include "kernels/host/vector_loops.inc"

}  // namespace

ReduceFn GetReduce(tcclDataType_t dt, tcclRedOp_t op) { return PickVectorKernel(dt, op); }
DivideFn GetDivide(tcclDataType_t dt) { return PickVectorDivide(dt); }

}  // namespace avx2
}  // namespace tccl
