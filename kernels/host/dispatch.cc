// Chooses the kernel ISA once per process and hands out kernels by (dtype, op).
#include <cmath>
#include <cstdint>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "kernels/host/half.h"
#include "kernels/host/reduce.h"

namespace tccl {

namespace {

bool CpuRunsAvx2() {
#if defined(__x86_64__) && defined(TCCL_HAVE_AVX2_KERNELS)
  __builtin_cpu_init();
  // F16C is CPUID leaf 1, ECX bit 29 (not every compiler accepts "f16c" in __builtin_cpu_supports).
  unsigned a = 0, b = 0, c = 0, d = 0;
  const bool f16c = __get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 29));
  return __builtin_cpu_supports("avx2") && f16c;
#else
  return false;
#endif
}

// __builtin_cpu_supports reports AVX-512 only where the OS also saves the 512-bit state (XCR0).
bool CpuRunsAvx512() {
#if defined(__x86_64__) && defined(TCCL_HAVE_AVX512_KERNELS)
  return CpuRunsAvx2() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
#else
  return false;
#endif
}

bool CpuRunsAvx512Bf16() {
#if defined(__x86_64__) && defined(TCCL_HAVE_AVX512_BF16_KERNELS)
  return CpuRunsAvx512() && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bf16");
#else
  return false;
#endif
}

bool CpuRunsAvx512Fp16() {
#if defined(__x86_64__) && defined(TCCL_HAVE_AVX512_FP16_KERNELS)
  // AVX512-FP16 is CPUID leaf 7, sub-leaf 0, EDX bit 23 (clang 14, which builds the fuzzers, does
  // not accept "avx512fp16" in __builtin_cpu_supports); its registers are AVX-512's, whose OS
  // support CpuRunsAvx512 has checked.
  unsigned a = 0, b = 0, c = 0, d = 0;
  return CpuRunsAvx512Bf16() && __get_cpuid_count(7, 0, &a, &b, &c, &d) && (d & (1u << 23));
#else
  return false;
#endif
}

}  // namespace

std::vector<KernelIsa> SupportedIsas() {
  static const std::vector<KernelIsa> isas = [] {
    std::vector<KernelIsa> v{KernelIsa::Portable};
    if (CpuRunsAvx2()) v.push_back(KernelIsa::Avx2);
    if (CpuRunsAvx512()) v.push_back(KernelIsa::Avx512);
    if (CpuRunsAvx512Bf16()) v.push_back(KernelIsa::Avx512Bf16);
    if (CpuRunsAvx512Fp16()) v.push_back(KernelIsa::Avx512Fp16);
    return v;
  }();
  return isas;
}

KernelIsa BestIsa() { return SupportedIsas().back(); }

const char* IsaName(KernelIsa isa) {
  switch (isa) {
    case KernelIsa::Avx2: return "avx2";
    case KernelIsa::Avx512: return "avx512";
    case KernelIsa::Avx512Bf16: return "avx512bf16";
    case KernelIsa::Avx512Fp16: return "avx512fp16";
    default: return "portable";
  }
}

namespace {

// One vector ISA's two tables (reduce_*.cc); the portable build's are below.
struct IsaTables {
  ReduceFn (*reduce)(tcclDataType_t, tcclRedOp_t);
  DivideFn (*divide)(tcclDataType_t);
};

// nullptr for Portable and for ISAs this build has no kernels for. constexpr: no guard to check
// per call (a send/recv group asks for its kernels on every call).
const IsaTables* VectorTables(KernelIsa isa) {
#if defined(TCCL_HAVE_AVX512_FP16_KERNELS)
  static constexpr IsaTables fp16{&avx512_fp16::GetReduce, &avx512_fp16::GetDivide};
  if (isa == KernelIsa::Avx512Fp16) return &fp16;
#endif
#if defined(TCCL_HAVE_AVX512_BF16_KERNELS)
  static constexpr IsaTables bf16{&avx512_bf16::GetReduce, &avx512_bf16::GetDivide};
  if (isa == KernelIsa::Avx512Bf16) return &bf16;
#endif
#if defined(TCCL_HAVE_AVX512_KERNELS)
  static constexpr IsaTables avx512{&avx512::GetReduce, &avx512::GetDivide};
  if (isa == KernelIsa::Avx512) return &avx512;
#endif
#if defined(TCCL_HAVE_AVX2_KERNELS)
  static constexpr IsaTables avx2{&avx2::GetReduce, &avx2::GetDivide};
  if (isa == KernelIsa::Avx2) return &avx2;
#endif
  (void)isa;
  return nullptr;
}

}  // namespace

ReduceFn GetReduceFn(tcclDataType_t dt, tcclRedOp_t op, KernelIsa isa) {
  const IsaTables* tables = VectorTables(isa);
  return tables ? tables->reduce(dt, op) : portable::GetReduce(dt, op);
}

namespace {

template <typename T>
using Unaligned __attribute__((aligned(1))) = T;

template <typename T>
void DivideInt(void* dst, size_t n, int divisor) {
  Unaligned<T>* d = static_cast<Unaligned<T>*>(dst);
  for (size_t i = 0; i < n; ++i) d[i] = (T)(d[i] / (T)divisor);
}

template <typename T>
void DivideFloat(void* dst, size_t n, int divisor) {
  Unaligned<T>* d = static_cast<Unaligned<T>*>(dst);
  const T div = (T)divisor;
  for (size_t i = 0; i < n; ++i) d[i] = d[i] / div;
}

template <float (*Widen)(uint16_t), uint16_t (*Narrow)(float)>
void Divide16(void* dst, size_t n, int divisor) {
  Unaligned<uint16_t>* d = static_cast<Unaligned<uint16_t>*>(dst);
  const float div = (float)divisor;
  for (size_t i = 0; i < n; ++i) d[i] = Narrow(Widen(d[i]) / div);
}

}  // namespace

DivideFn GetDivideFn(tcclDataType_t dt, KernelIsa isa) {
  const IsaTables* tables = VectorTables(isa);
  if (DivideFn vector = tables ? tables->divide(dt) : nullptr) return vector;
  switch (dt) {
    case tcclInt8: return &DivideInt<int8_t>;
    case tcclUint8: return &DivideInt<uint8_t>;
    case tcclInt32: return &DivideInt<int32_t>;
    case tcclUint32: return &DivideInt<uint32_t>;
    case tcclInt64: return &DivideInt<int64_t>;
    case tcclUint64: return &DivideInt<uint64_t>;
    case tcclFloat32: return &DivideFloat<float>;
    case tcclFloat64: return &DivideFloat<double>;
    case tcclFloat16: return &Divide16<&HalfToFloat, &FloatToHalf>;
    case tcclBfloat16: return &Divide16<&Bf16ToFloat, &FloatToBf16>;
    default: return nullptr;
  }
}

}  // namespace tccl
