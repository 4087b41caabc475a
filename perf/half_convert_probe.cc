// Standalone: what bounds the float16 sum where the CPU has no AVX512-FP16 (docs/kernels.md, "On a
// Zen 4 EPYC"): the F16C conversions on 512 bits, each alone and in the kernel's block (two
// widenings, an add, the NaN canonicalisation, a narrowing), against the block without the
// canonicalisation and with an integer widening instead of VCVTPH2PS. ns per 16 lanes, best of 7,
// over 32 KiB arrays (three of them stay in L2).
//
//   g++ -O2 -march=x86-64-v4 -mprefer-vector-width=512 perf/half_convert_probe.cc -o /tmp/half_convert_probe
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>

namespace {
constexpr int kLanes = 16384;
alignas(64) uint16_t X[kLanes], Y[kLanes], D[kLanes];

template <class Fn>
void Time(const char* name, Fn fn) {
  using Clock = std::chrono::steady_clock;
  for (int w = 0; w < 100; ++w) fn();
  double best = 1e30;
  for (int r = 0; r < 7; ++r) {
    const auto t0 = Clock::now();
    constexpr int kIters = 5000;
    for (int i = 0; i < kIters; ++i) fn();
    best = std::min(best, std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / kIters);
  }
  printf("%-44s %6.3f ns per 16 lanes\n", name, best / (kLanes / 16));
}

__m512 Widen(const uint16_t* p) { return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))); }
void Narrow(uint16_t* p, __m512 v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtps_ph(v, 0)); }
__m512 Canon(__m512 r) { return _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(r, r, _CMP_UNORD_Q), _mm512_set1_ps(__builtin_nanf(""))); }
// float16 -> float32 without VCVTPH2PS (finite values; infinities and NaNs fixed up by a mask).
__m512 WidenByIntegers(const uint16_t* p) {
  const __m512i x = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  const __m512i magnitude = _mm512_slli_epi32(_mm512_and_si512(x, _mm512_set1_epi32(0x7FFF)), 13);
  __m512 f = _mm512_mul_ps(_mm512_castsi512_ps(magnitude), _mm512_castsi512_ps(_mm512_set1_epi32(0x77800000)));  // x 2^112
  const __mmask16 special = _mm512_cmpge_epu32_mask(magnitude, _mm512_set1_epi32(0x0F800000));
  f = _mm512_castsi512_ps(_mm512_mask_or_epi32(_mm512_castps_si512(f), special, magnitude, _mm512_set1_epi32(0x70000000)));
  const __m512i sign = _mm512_slli_epi32(_mm512_and_si512(x, _mm512_set1_epi32(0x8000)), 16);
  return _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(f), sign));
}
}  // namespace

int main() {
  for (int i = 0; i < kLanes; ++i) {
    X[i] = (uint16_t)(0x3C00 + (i & 255));
    Y[i] = (uint16_t)(0x3800 + (i & 127));
  }
  Time("VCVTPH2PS alone (four sums in flight)", [] {
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (int i = 0; i < kLanes; i += 64) {
      a0 = _mm512_add_ps(a0, Widen(X + i));
      a1 = _mm512_add_ps(a1, Widen(X + i + 16));
      a2 = _mm512_add_ps(a2, Widen(X + i + 32));
      a3 = _mm512_add_ps(a3, Widen(X + i + 48));
    }
    asm volatile("" ::"v"(a0), "v"(a1), "v"(a2), "v"(a3));
  });
  Time("VCVTPS2PH alone", [] {
    __m512 v = _mm512_set1_ps(1.5f);
    for (int i = 0; i < kLanes; i += 16) {
      Narrow(D + i, v);
      asm volatile("" : "+v"(v));
    }
  });
  Time("sum block as in the kernel (with Canon)", [] {
    for (int i = 0; i < kLanes; i += 16) Narrow(D + i, Canon(_mm512_add_ps(Widen(X + i), Widen(Y + i))));
  });
  Time("sum block without Canon", [] {
    for (int i = 0; i < kLanes; i += 16) Narrow(D + i, _mm512_add_ps(Widen(X + i), Widen(Y + i)));
  });
  Time("sum block, widened by integers", [] {
    for (int i = 0; i < kLanes; i += 16) Narrow(D + i, Canon(_mm512_add_ps(WidenByIntegers(X + i), WidenByIntegers(Y + i))));
  });
  return 0;
}
