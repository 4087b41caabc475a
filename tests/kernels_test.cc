// Host kernels against an independent scalar reference, bit for bit: every dtype x op x ISA,
// special values (NaN, infinities, signed zeros, subnormals), unaligned buffers; and the 16-bit
// conversions exhaustively.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "kernels/host/copy.h"
#include "kernels/host/dtype.h"
#include "kernels/host/half.h"
#include "kernels/host/reduce.h"
#include "kernels/host/tree_reduce.h"
#include "tests/support/sweep.h"

namespace tccl {
namespace {

// ---- independent references for the 16-bit formats (double arithmetic, no bit tricks) ----

double HalfRefDecode(uint16_t h) {
  int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
  double v = e == 0 ? std::ldexp((double)m, -24) : std::ldexp(1.0 + m / 1024.0, e - 15);
  if (e == 31) v = m ? NAN : INFINITY;
  return s ? -v : v;
}

// Rounds a finite double to the nearest float16 value (ties to even), encoded.
uint16_t HalfRefEncode(double v) {
  uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  double a = std::fabs(v);
  if (std::isnan(v)) return 0;  // callers handle NaN separately
  if (a >= 65520.0) return sign | 0x7C00;
  int exp = a == 0 ? -25 : std::ilogb(a);
  double quantum = std::ldexp(1.0, exp < -14 ? -24 : exp - 10);
  double q = std::nearbyint(a / quantum);  // ties to even under the default rounding mode
  double r = q * quantum;
  // Encode r by search over exponents: exact because r is representable.
  if (r == 0) return sign;
  if (r < std::ldexp(1.0, -14)) return sign | (uint16_t)(r / std::ldexp(1.0, -24));
  if (r >= 65520.0) return sign | 0x7C00;
  int e = std::ilogb(r);
  uint16_t mant = (uint16_t)((r / std::ldexp(1.0, e) - 1.0) * 1024.0);
  return sign | (uint16_t)((e + 15) << 10) | mant;
}

uint16_t Bf16RefEncode(float f) {
  double v = f, a = std::fabs(v);
  if (a == 0 || std::isinf(v)) return (uint16_t)(FloatBits(f) >> 16);
  int exp = std::ilogb(a);
  double quantum = std::ldexp(1.0, (exp < -126 ? -126 : exp) - 7);
  double r = std::nearbyint(a / quantum) * quantum;
  float rf = (float)(std::signbit(v) ? -r : r);  // exact, or overflows to inf exactly as RNE does
  return (uint16_t)(FloatBits(rf) >> 16);
}

// CopyBytes takes its own loop for some sizes and alignments and memcpy for the rest: every
// byte arrives, none around the destination is touched, whatever the sizes and offsets.
TEST(CopyBytes, EverySizeAndAlignmentLikeMemcpy) {
  std::mt19937 rng(7);
  std::vector<unsigned char> src((1 << 20) + 256), dst(src.size()), want(src.size());
  for (auto& b : src) b = (unsigned char)rng();
  for (size_t n : {0, 1, 63, 64, 65, 4095, 4096, 4097, 65536 + 13, 524287, 524288, 524289})
    for (size_t so : {0, 1, 8, 16, 33, 63})
      for (size_t d_o : {0, 1, 8, 16, 32, 48, 63}) {
        memset(dst.data(), 0xA5, dst.size());
        memset(want.data(), 0xA5, want.size());
        tccl::CopyBytes(dst.data() + d_o, src.data() + so, n);
        memcpy(want.data() + d_o, src.data() + so, n);
        ASSERT_EQ(0, memcmp(dst.data(), want.data(), dst.size())) << "n " << n << " src +" << so << " dst +" << d_o;
      }
}

TEST(HalfConversion, DecodeAllValues) {
  for (uint32_t h = 0; h < 65536; ++h) {
    float f = HalfToFloat((uint16_t)h);
    double ref = HalfRefDecode((uint16_t)h);
    if (std::isnan(ref)) {
      ASSERT_TRUE(std::isnan(f)) << h;
      ASSERT_EQ(FloatToHalf(f), (uint16_t)(h | 0x200)) << "NaN round trip keeps sign and payload, quieted: " << h;
    } else {
      ASSERT_EQ((double)f, ref) << h;
      ASSERT_EQ(std::signbit(f), std::signbit(ref)) << h;
      ASSERT_EQ(FloatToHalf(f), h) << "round trip " << h;
    }
  }
}

TEST(HalfConversion, EncodeMatchesReferenceIncludingTies) {
  std::mt19937 rng(1);
  std::vector<float> probes;
  for (int i = 0; i < 2000000; ++i) probes.push_back(BitsFloat(rng()));
  // Every midpoint between adjacent finite halves, and its neighbours: the ties-to-even cases.
  for (uint32_t h = 0; h < 0x7BFF; ++h) {
    float mid = (float)((HalfRefDecode((uint16_t)h) + HalfRefDecode((uint16_t)(h + 1))) / 2);
    probes.push_back(mid);
    probes.push_back(-mid);
    probes.push_back(std::nextafter(mid, 0.f));
    probes.push_back(std::nextafter(mid, 1e9f));
  }
  for (float f : {65504.f, 65519.f, 65520.f, 1e-8f, 2.98e-8f, 2.99e-8f, 0.f, -0.f, INFINITY, -INFINITY}) probes.push_back(f);
  for (float f : probes) {
    if (std::isnan(f)) continue;
    ASSERT_EQ(FloatToHalf(f), HalfRefEncode(f)) << "f=" << f << " bits=" << std::hex << FloatBits(f);
  }
}

TEST(Bf16Conversion, EncodeMatchesReference) {
  std::mt19937 rng(2);
  for (int i = 0; i < 2000000; ++i) {
    float f = BitsFloat(rng());
    if (std::isnan(f)) {
      uint16_t b = FloatToBf16(f);
      ASSERT_TRUE(std::isnan(Bf16ToFloat(b)));
      ASSERT_EQ(b & 0x8000, (FloatBits(f) >> 16) & 0x8000) << "NaN keeps its sign";
      continue;
    }
    ASSERT_EQ(FloatToBf16(f), Bf16RefEncode(f)) << std::hex << FloatBits(f);
  }
  for (uint32_t b = 0; b < 65536; ++b) {
    float f = Bf16ToFloat((uint16_t)b);
    if (!std::isnan(f)) {
      ASSERT_EQ(FloatToBf16(f), b);
    }
  }
}

// ---- reduction kernels ----

template <typename T>
T Pick(std::mt19937_64& rng, bool special) {
  if (std::is_floating_point<T>::value && special) {
    const T specials[] = {(T)0.0, (T)-0.0, (T)INFINITY, (T)-INFINITY, (T)NAN, std::numeric_limits<T>::denorm_min(),
                          -std::numeric_limits<T>::denorm_min(), std::numeric_limits<T>::max(), (T)1, (T)-1};
    return specials[rng() % 10];
  }
  if (std::is_floating_point<T>::value) return (T)std::ldexp((double)(int64_t)(rng() % 2000001 - 1000000), (int)(rng() % 40) - 30);
  T v;
  uint64_t bits = rng();
  memcpy(&v, &bits, sizeof(T));
  return v;
}

// The documented semantics written out plainly.
template <typename T>
typename std::enable_if<std::is_integral<T>::value, T>::type RefOp(T a, T b, tcclRedOp_t op) {
  using U = typename std::make_unsigned<T>::type;
  if (op == tcclSum || op == tcclAvg) return (T)(U)((U)a + (U)b);
  if (op == tcclProd) return (T)(U)((U)a * (U)b);
  return op == tcclMax ? std::max(a, b) : std::min(a, b);
}

template <typename T>
typename std::enable_if<std::is_floating_point<T>::value, T>::type RefOp(T a, T b, tcclRedOp_t op) {
  T r = op == tcclProd ? a * b : a + b;
  if (op == tcclSum || op == tcclAvg || op == tcclProd) return std::isnan(r) ? std::numeric_limits<T>::quiet_NaN() : r;
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
  if (a == 0 && b == 0) {  // +0 counts as greater than -0
    bool negative = op == tcclMax ? (std::signbit(a) && std::signbit(b)) : (std::signbit(a) || std::signbit(b));
    return negative ? (T)-0.0 : (T)0.0;
  }
  return op == tcclMax ? (a > b ? a : b) : (a < b ? a : b);
}

template <typename T>
void CheckType(tcclDataType_t dt) {
  std::mt19937_64 rng(dt);
  const size_t n = 1031;
  for (KernelIsa isa : SupportedIsas()) {
    for (int op = 0; op < tcclNumOps; ++op) {
      for (size_t misalign : {0, 1, 3}) {
        std::vector<unsigned char> ab(n * sizeof(T) + 8), bb(n * sizeof(T) + 8), db(n * sizeof(T) + 8);
        T* a = reinterpret_cast<T*>(ab.data() + misalign);
        T* b = reinterpret_cast<T*>(bb.data() + misalign);
        T* d = reinterpret_cast<T*>(db.data() + misalign);
        std::vector<T> av(n), bv(n);
        for (size_t i = 0; i < n; ++i) {
          av[i] = Pick<T>(rng, i % 7 == 0);
          bv[i] = Pick<T>(rng, i % 5 == 0);
        }
        memcpy(a, av.data(), n * sizeof(T));
        memcpy(b, bv.data(), n * sizeof(T));
        GetReduceFn(dt, (tcclRedOp_t)op, isa)(d, a, b, n);
        for (size_t i = 0; i < n; ++i) {
          T want = RefOp(av[i], bv[i], (tcclRedOp_t)op), got;
          memcpy(&got, reinterpret_cast<unsigned char*>(d) + i * sizeof(T), sizeof(T));
          ASSERT_EQ(0, memcmp(&got, &want, sizeof(T)))
              << DtypeName(dt) << " " << OpName((tcclRedOp_t)op) << " " << IsaName(isa) << " i=" << i << " a=" << +av[i]
              << " b=" << +bv[i] << " got=" << +got << " want=" << +want;
        }
        // In place (dst == a) gives the same bits.
        GetReduceFn(dt, (tcclRedOp_t)op, isa)(a, a, b, n);
        ASSERT_EQ(0, memcmp(a, d, n * sizeof(T)));
      }
    }
  }
}

TEST(ReduceKernels, IntegerTypes) {
  CheckType<int8_t>(tcclInt8);
  CheckType<uint8_t>(tcclUint8);
  CheckType<int32_t>(tcclInt32);
  CheckType<uint32_t>(tcclUint32);
  CheckType<int64_t>(tcclInt64);
  CheckType<uint64_t>(tcclUint64);
}

TEST(ReduceKernels, FloatTypes) {
  CheckType<float>(tcclFloat32);
  CheckType<double>(tcclFloat64);
}

// 16-bit types: widen exactly, operate in float32 with the float rules, round once.
void Check16(tcclDataType_t dt, float (*widen)(uint16_t), uint16_t (*narrow)(float)) {
  std::mt19937 rng(dt);
  const size_t n = 4099;
  for (KernelIsa isa : SupportedIsas()) {
    for (int op = 0; op < tcclNumOps; ++op) {
      std::vector<uint16_t> a(n + 1), b(n + 1), d(n + 1);
      for (size_t i = 0; i < n + 1; ++i) {
        a[i] = (uint16_t)rng();
        b[i] = (uint16_t)rng();
      }
      // Odd offset: unaligned 16-bit elements.
      unsigned char* base = reinterpret_cast<unsigned char*>(d.data());
      std::vector<unsigned char> ua(2 * n + 1), ub(2 * n + 1), ud(2 * n + 1);
      memcpy(ua.data() + 1, a.data(), 2 * n);
      memcpy(ub.data() + 1, b.data(), 2 * n);
      GetReduceFn(dt, (tcclRedOp_t)op, isa)(ud.data() + 1, ua.data() + 1, ub.data() + 1, n);
      memcpy(base, ud.data() + 1, 2 * n);
      for (size_t i = 0; i < n; ++i) {
        float x = widen(a[i]), y = widen(b[i]);
        float r = RefOp<float>(x, y, (tcclRedOp_t)op);
        uint16_t want = narrow(r);
        ASSERT_EQ(d[i], want) << DtypeName(dt) << " " << OpName((tcclRedOp_t)op) << " " << IsaName(isa) << " i=" << i
                              << " a=" << x << " b=" << y;
      }
    }
  }
}

TEST(ReduceKernels, SixteenBitTypes) {
  Check16(tcclFloat16, &HalfToFloat, &FloatToHalf);
  Check16(tcclBfloat16, &Bf16ToFloat, &FloatToBf16);
}

// Every ordered pair of special values, in every float type, op and ISA: random inputs meet +0
// and -0 in one element too rarely to pin down max/min's signed-zero rule.
template <typename T>
void CheckSpecialPairs(tcclDataType_t dt) {
  const T s[] = {(T)0.0, (T)-0.0, (T)INFINITY, (T)-INFINITY, std::numeric_limits<T>::quiet_NaN(),
                 -std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::signaling_NaN(),
                 std::numeric_limits<T>::denorm_min(), -std::numeric_limits<T>::denorm_min(),
                 std::numeric_limits<T>::max(), -std::numeric_limits<T>::max(), (T)1, (T)-1, (T)1.5};
  const size_t k = sizeof(s) / sizeof(s[0]), n = k * k;
  std::vector<T> a(n), b(n), d(n);
  for (size_t i = 0; i < n; ++i) a[i] = s[i / k], b[i] = s[i % k];
  for (KernelIsa isa : SupportedIsas())
    for (int op = 0; op < tcclNumOps; ++op) {
      GetReduceFn(dt, (tcclRedOp_t)op, isa)(d.data(), a.data(), b.data(), n);
      for (size_t i = 0; i < n; ++i) {
        T want = RefOp(a[i], b[i], (tcclRedOp_t)op);
        ASSERT_EQ(0, memcmp(&d[i], &want, sizeof(T)))
            << DtypeName(dt) << " " << OpName((tcclRedOp_t)op) << " " << IsaName(isa) << " a=" << a[i] << " b=" << b[i]
            << " got=" << d[i] << " want=" << want;
      }
    }
}

void CheckSpecialPairs16(tcclDataType_t dt, const std::vector<uint16_t>& s, float (*widen)(uint16_t),
                         uint16_t (*narrow)(float)) {
  const size_t k = s.size(), n = k * k;
  std::vector<uint16_t> a(n), b(n), d(n);
  for (size_t i = 0; i < n; ++i) a[i] = s[i / k], b[i] = s[i % k];
  for (KernelIsa isa : SupportedIsas())
    for (int op = 0; op < tcclNumOps; ++op) {
      GetReduceFn(dt, (tcclRedOp_t)op, isa)(d.data(), a.data(), b.data(), n);
      for (size_t i = 0; i < n; ++i)
        ASSERT_EQ(d[i], narrow(RefOp<float>(widen(a[i]), widen(b[i]), (tcclRedOp_t)op)))
            << DtypeName(dt) << " " << OpName((tcclRedOp_t)op) << " " << IsaName(isa) << std::hex << " a=0x" << a[i]
            << " b=0x" << b[i];
    }
}

TEST(ReduceKernels, EveryPairOfSpecialValues) {
  CheckSpecialPairs<float>(tcclFloat32);
  CheckSpecialPairs<double>(tcclFloat64);
  // zeros, infinities, quiet and signalling NaNs of both signs, smallest subnormals, largest
  // finite values, 1, -1, and 1 + 1 ulp.
  CheckSpecialPairs16(tcclFloat16,
                      {0x0000, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0xFE01, 0x7D00, 0x0001, 0x8001, 0x7BFF, 0xFBFF,
                       0x3C00, 0xBC00, 0x3C01},
                      &HalfToFloat, &FloatToHalf);
  CheckSpecialPairs16(tcclBfloat16,
                      {0x0000, 0x8000, 0x7F80, 0xFF80, 0x7FC0, 0xFFC1, 0x7F81, 0x0001, 0x8001, 0x7F7F, 0xFF7F,
                       0x3F80, 0xBF80, 0x3F81},
                      &Bf16ToFloat, &FloatToBf16);
}

// Every ordered pair of 16-bit values (2^32), every op, every vector ISA against the portable
// kernels (which widen, operate in float32 and round once, checked above against the reference):
// the vector builds reach the same bits by other routes — float16 sums and products on float16
// lanes (avx512fp16), max and min on the bits without widening — whose exactness is an argument
// (reduce_avx512.cc, vector_loops.inc); this makes it a check. Rows of first operands are split
// between two threads (~35 s for float16 on 2 cores, where one thread took 65); under the
// sanitizer builds (TCCL_TEST_SWEEP=quick) every 257th row only.
std::string FirstMismatch16(tcclDataType_t dt, size_t first_row, size_t row_step) {
  const size_t n = 1 << 16;
  std::vector<uint16_t> a(n), b(n), want(n), got(n);
  for (size_t i = 0; i < n; ++i) b[i] = (uint16_t)i;
  for (tcclRedOp_t op : {tcclSum, tcclProd, tcclMax, tcclMin}) {
    const ReduceFn reference = GetReduceFn(dt, op, KernelIsa::Portable);
    for (size_t x = first_row; x < n; x += row_step) {
      std::fill(a.begin(), a.end(), (uint16_t)x);
      reference(want.data(), a.data(), b.data(), n);
      for (KernelIsa isa : SupportedIsas()) {
        if (isa == KernelIsa::Portable) continue;
        GetReduceFn(dt, op, isa)(got.data(), a.data(), b.data(), n);
        if (got == want) continue;
        size_t i = 0;
        while (got[i] == want[i]) ++i;
        std::ostringstream out;
        out << DtypeName(dt) << " " << OpName(op) << " " << IsaName(isa) << std::hex << " a=0x" << x << " b=0x" << i
            << " got=0x" << got[i] << " want=0x" << want[i];
        return out.str();
      }
    }
  }
  return "";
}

void CheckEveryPair16(tcclDataType_t dt) {
  const size_t step = tccl_test::QuickSweep() ? 257 : 1;
  std::string mismatch[2];
  std::thread other([&] { mismatch[1] = FirstMismatch16(dt, step, 2 * step); });
  mismatch[0] = FirstMismatch16(dt, 0, 2 * step);
  other.join();
  EXPECT_EQ(mismatch[0], "");
  EXPECT_EQ(mismatch[1], "");
}

TEST(ReduceKernels, EveryPairOfFloat16Values) { CheckEveryPair16(tcclFloat16); }
TEST(ReduceKernels, EveryPairOfBfloat16Values) { CheckEveryPair16(tcclBfloat16); }

TEST(ReduceKernels, NaNResultsAreCanonicalInEveryIsa) {
  std::mt19937 rng(7);
  const size_t n = 4096;
  std::vector<uint16_t> a(n), b(n), p(n), v(n);
  for (size_t i = 0; i < n; ++i) {
    a[i] = (uint16_t)(0x7C01 + rng() % 0x3FF) | (uint16_t)((rng() & 1) << 15);  // NaNs, signalling or quiet
    b[i] = (uint16_t)rng();
  }
  for (tcclRedOp_t op : {tcclSum, tcclProd}) {
    GetReduceFn(tcclFloat16, op, KernelIsa::Portable)(p.data(), a.data(), b.data(), n);
    for (KernelIsa isa : SupportedIsas()) {
      GetReduceFn(tcclFloat16, op, isa)(v.data(), a.data(), b.data(), n);
      ASSERT_EQ(p, v) << IsaName(isa);
      for (uint16_t h : v) ASSERT_EQ(h, 0x7E00) << "every NaN result is the canonical quiet NaN (" << IsaName(isa) << ")";
    }
  }
}

TEST(DivideKernels, AvgSemantics) {
  int32_t i32[] = {7, -7, 8, 2147483647};
  GetDivideFn(tcclInt32)(i32, 4, 2);
  EXPECT_EQ(i32[0], 3);
  EXPECT_EQ(i32[1], -3);  // truncates toward zero
  EXPECT_EQ(i32[2], 4);
  EXPECT_EQ(i32[3], 1073741823);
  float f[] = {1.0f, 3.0f};
  GetDivideFn(tcclFloat32)(f, 2, 3);
  EXPECT_EQ(f[0], 1.0f / 3.0f);
  uint16_t h = FloatToHalf(1.0f);
  GetDivideFn(tcclFloat16)(&h, 1, 3);
  EXPECT_EQ(h, FloatToHalf(1.0f / 3.0f));
}

// avg's division in every ISA against the portable loops: every 16-bit value (NaNs, infinities,
// subnormals included), and float32/float64 values with special ones among them, over divisors
// that are and are not powers of two, beyond float16's exact integers, and beyond its range; at
// an odd byte offset, with a tail.
TEST(DivideKernels, EveryIsaMatchesThePortableLoops) {
  const int divisors[] = {1, 2, 3, 5, 7, 8, 12, 255, 2049, 3001, 65537, 1 << 20};
  for (tcclDataType_t dt : {tcclFloat16, tcclBfloat16, tcclFloat32, tcclFloat64}) {
    const size_t es = DtypeSize(dt), n = dt == tcclFloat16 || dt == tcclBfloat16 ? (1 << 16) + 7 : 4099;
    std::vector<unsigned char> in(n * es);
    std::mt19937_64 rng(dt);
    if (es == 2) {
      for (size_t i = 0; i < n; ++i) {
        const uint16_t v = (uint16_t)i;
        memcpy(&in[i * 2], &v, 2);
      }
    } else {
      for (auto& byte : in) byte = (unsigned char)rng();
      for (size_t i = 0; i + 4 <= n; i += 37) {  // NaNs with payloads, infinities, zeros, subnormals
        if (dt == tcclFloat32) {
          const uint32_t sp[] = {0x7FC00001, 0xFF800000, 0x80000000, 0x00000003};
          for (int k = 0; k < 4; ++k) memcpy(&in[(i + k) * 4], &sp[k], 4);
        } else {
          const uint64_t sp[] = {0x7FF8000000000001ull, 0xFFF0000000000000ull, 0x8000000000000000ull, 3};
          for (int k = 0; k < 4; ++k) memcpy(&in[(i + k) * 8], &sp[k], 8);
        }
      }
    }
    for (int divisor : divisors) {
      std::vector<unsigned char> want(in);
      GetDivideFn(dt, KernelIsa::Portable)(want.data(), n, divisor);
      for (KernelIsa isa : SupportedIsas()) {
        std::vector<unsigned char> got(n * es + 1);
        memcpy(got.data() + 1, in.data(), n * es);
        GetDivideFn(dt, isa)(got.data() + 1, n, divisor);
        for (size_t i = 0; i < n; ++i)
          ASSERT_EQ(0, memcmp(&got[1 + i * es], &want[i * es], es))
              << DtypeName(dt) << " " << IsaName(isa) << " divisor " << divisor << " element " << i;
      }
    }
  }
}

// The canonical tree for N = 5 is ((x0 + x1) + x2) + (x3 + x4) (docs/determinism.md).
TEST(TreeReduce, CanonicalShape) {
  // (x3 + x4) first keeps the 1 that adding 1e8 to the prefix would round away.
  const float x[5] = {0.5f, 0.25f, 0.25f, 1e8f, -1e8f};
  const void* in[5];
  for (int i = 0; i < 5; ++i) in[i] = &x[i];
  float out = 0;
  TreeReduce(in, 5, &out, 1, 4, GetReduceFn(tcclFloat32, tcclSum));
  float want = ((x[0] + x[1]) + x[2]) + (x[3] + x[4]);
  EXPECT_EQ(FloatBits(out), FloatBits(want));
  EXPECT_NE(FloatBits(out), FloatBits((((x[0] + x[1]) + x[2]) + x[3]) + x[4])) << "inputs must be order-sensitive";
}

TEST(TreeReduce, LargeCountsAreBlockwiseIdentical) {
  // The result of element i must not depend on the buffer length (blocks are an implementation
  // detail).
  std::mt19937 rng(3);
  const int n = 7;
  const size_t count = 100003;
  std::vector<std::vector<float>> data(n, std::vector<float>(count));
  std::vector<const void*> in(n);
  for (int r = 0; r < n; ++r) {
    for (float& v : data[r]) v = std::ldexp((float)(int)(rng() % 100000), (int)(rng() % 30) - 15) * (rng() & 1 ? 1 : -1);
    in[r] = data[r].data();
  }
  std::vector<float> whole(count);
  TreeReduce(in.data(), n, whole.data(), count, 4, GetReduceFn(tcclFloat32, tcclSum));
  for (size_t i = 0; i < count; i += 997) {
    std::vector<const void*> one(n);
    for (int r = 0; r < n; ++r) one[r] = &data[r][i];
    float single;
    TreeReduce(one.data(), n, &single, 1, 4, GetReduceFn(tcclFloat32, tcclSum));
    ASSERT_EQ(FloatBits(single), FloatBits(whole[i])) << i;
  }
}

}  // namespace
}  // namespace tccl

namespace tccl {
namespace {

// The canonical order fixes a tree's shape; algorithms may put a node's two operands either way
// round. That is exact only because every op is commutative bit for bit, NaN included.
TEST(ReduceKernels, EveryOpIsCommutativeBitForBit) {
  std::mt19937_64 rng(11);
  const size_t n = 4096;
  for (int dt = 0; dt < tcclNumTypes; ++dt) {
    const size_t es = DtypeSize((tcclDataType_t)dt);
    std::vector<unsigned char> a(n * es), b(n * es), ab(n * es), ba(n * es);
    for (auto& x : a) x = (unsigned char)rng();
    for (auto& x : b) x = (unsigned char)rng();
    // Special values in every float type: NaNs with payloads, infinities of both signs, zeros.
    if (dt == tcclFloat32)
      for (size_t i = 0; i < n; i += 7) {
        const uint32_t sp[] = {0x7FC00001, 0xFF800000, 0x7F800000, 0x80000000, 0x00000000, 0x7FA00000};
        memcpy(&a[i * 4], &sp[i % 6], 4);
        memcpy(&b[i * 4], &sp[(i / 7) % 6], 4);
      }
    for (KernelIsa isa : SupportedIsas()) {
      for (int op = 0; op < tcclNumOps; ++op) {
        ReduceFn f = GetReduceFn((tcclDataType_t)dt, (tcclRedOp_t)op, isa);
        f(ab.data(), a.data(), b.data(), n);
        f(ba.data(), b.data(), a.data(), n);
        ASSERT_EQ(ab, ba) << DtypeName((tcclDataType_t)dt) << " " << OpName((tcclRedOp_t)op) << " " << IsaName(isa);
      }
    }
  }
}

}  // namespace
}  // namespace tccl
