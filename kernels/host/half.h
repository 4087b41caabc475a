// Scalar float16 / bfloat16 <-> float32 conversions, round-to-nearest-even, with NaN kept quiet
// and its sign and top payload bits preserved (the behaviour of x86 F16C, so the scalar and
// vector kernels give identical bits). Assumes the default FP environment (no flush-to-zero).
#pragma once

#include <cstdint>
#include <cstring>

// The same functions run on CUDA devices (kernels/cuda), so both sides round identically.
#ifdef __CUDACC__
#define TCCL_HOST_DEVICE __host__ __device__
#else
#define TCCL_HOST_DEVICE
#endif

namespace tccl {

TCCL_HOST_DEVICE inline uint32_t FloatBits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
TCCL_HOST_DEVICE inline float BitsFloat(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

TCCL_HOST_DEVICE inline float HalfToFloat(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1F;
  uint32_t mant = h & 0x3FF;
  if (exp == 0x1F) return BitsFloat(sign | 0x7F800000 | (mant << 13));  // inf / NaN
  if (exp == 0) {
    // zero or subnormal: value = mant * 2^-24, exact in float
    float v = (float)mant * BitsFloat(0x33800000);  // 2^-24
    return BitsFloat(FloatBits(v) | sign);
  }
  return BitsFloat(sign | ((exp + 112) << 23) | (mant << 13));
}

TCCL_HOST_DEVICE inline uint16_t FloatToHalf(float f) {
  uint32_t x = FloatBits(f);
  uint32_t sign = (x >> 16) & 0x8000;
  uint32_t a = x & 0x7FFFFFFF;
  if (a > 0x7F800000) return (uint16_t)(sign | 0x7E00 | ((a >> 13) & 0x3FF));  // NaN, quieted
  if (a >= 0x477FF000) return (uint16_t)(sign | 0x7C00);  // >= 65520 rounds to infinity
  if (a < 0x38800000) {
    // Result is subnormal or zero: let the FPU round by adding 0.5 (exponent 126), whose ulp is
    // exactly the half subnormal ulp 2^-24.
    float r = BitsFloat(a) + BitsFloat(126u << 23);
    return (uint16_t)(sign | (FloatBits(r) - (126u << 23)));
  }
  uint32_t odd = (a >> 13) & 1;
  a += ((uint32_t)(15 - 127) << 23) + 0xFFF + odd;  // rebias exponent, round to nearest even
  return (uint16_t)(sign | (a >> 13));
}

TCCL_HOST_DEVICE inline float Bf16ToFloat(uint16_t h) { return BitsFloat((uint32_t)h << 16); }

TCCL_HOST_DEVICE inline uint16_t FloatToBf16(float f) {
  uint32_t x = FloatBits(f);
  uint32_t nan = (x & 0x7FFFFFFF) > 0x7F800000;
  uint32_t rounded = (x + 0x7FFF + ((x >> 16) & 1)) >> 16;
  uint32_t quiet = (x >> 16) | 0x40;
  return (uint16_t)(nan ? quiet : rounded);
}

// The bits max/min compare 16-bit floats by without widening them (vector_loops.inc's
// Ordered16Loop): the infinity a magnitude above which is a NaN, and the canonical quiet NaN every
// NaN result becomes (FloatOps::Canon's NaN narrowed).
struct HalfBits {
  static constexpr uint16_t kInfinity = 0x7C00, kQuietNaN = 0x7E00;
};
struct Bf16Bits {
  static constexpr uint16_t kInfinity = 0x7F80, kQuietNaN = 0x7FC0;
};

}  // namespace tccl
