// Host reduction kernels: plain functions over (dtype, op), chosen once per operation.
//
// Semantics (also in docs/kernels.md):
//  - dst[i] = a[i] OP b[i]; dst may equal a or b (in-place), other overlap is not allowed.
//  - Integers: sum and prod wrap modulo 2^bits; max/min exact.
//  - float16/bfloat16: both operands widen to float32 exactly, the op runs in float32 and the result
//    rounds back to 16 bits (nearest-even) — one rounding per binary operation.
//  - Floats follow IEEE-754 round-to-nearest-even, except that every NaN result is the canonical
//    quiet NaN (sign 0, payload 0): hardware keeps one operand's payload, and which one depends on
//    operand order, which compilers and GPUs do not preserve.
//  - max/min on floats: +0 is greater than -0; a NaN operand gives the canonical NaN, so max and
//    min are commutative bit for bit.
//  - avg: reduction uses sum; Divide() then divides each element once by the rank count
//    (integer division truncates toward zero; 16-bit types divide in float32 then round).
#pragma once

#include <cstddef>
#include <vector>

#include "tccl/tccl.h"

namespace tccl {

using ReduceFn = void (*)(void* dst, const void* a, const void* b, size_t n);
using DivideFn = void (*)(void* dst, size_t n, int divisor);

// Avx512Bf16: Avx512 on a CPU that also has AVX512_BF16 and AVX-512DQ (only bfloat16 differs).
// Avx512Fp16: Avx512Bf16 on a CPU that also has AVX512-FP16 (only float16 differs).
enum class KernelIsa { Portable, Avx2, Avx512, Avx512Bf16, Avx512Fp16 };

// The best ISA this CPU runs, decided once.
KernelIsa BestIsa();
// Every ISA this build has kernels for and this CPU runs, Portable first (tests and the kernel
// benchmark run each).
std::vector<KernelIsa> SupportedIsas();
const char* IsaName(KernelIsa isa);

// avg maps to the sum kernel. Returns nullptr for invalid dtype/op.
ReduceFn GetReduceFn(tcclDataType_t dt, tcclRedOp_t op, KernelIsa isa = BestIsa());
// Float types divide with the ISA's vectors (the same bits as the portable loops); integers in
// scalar loops.
DivideFn GetDivideFn(tcclDataType_t dt, KernelIsa isa = BestIsa());

// Per-ISA tables, defined in reduce_portable.cc, reduce_avx2.cc and reduce_avx512.cc (compiled a
// second time as reduce_avx512_bf16.cc and a third as reduce_avx512_fp16.cc).
namespace portable {
ReduceFn GetReduce(tcclDataType_t dt, tcclRedOp_t op);
}
namespace avx2 {
ReduceFn GetReduce(tcclDataType_t dt, tcclRedOp_t op);
DivideFn GetDivide(tcclDataType_t dt);  // nullptr for integers
}
namespace avx512 {
ReduceFn GetReduce(tcclDataType_t dt, tcclRedOp_t op);
DivideFn GetDivide(tcclDataType_t dt);  // nullptr for integers
}
namespace avx512_bf16 {
ReduceFn GetReduce(tcclDataType_t dt, tcclRedOp_t op);
DivideFn GetDivide(tcclDataType_t dt);  // nullptr for integers
}
namespace avx512_fp16 {
ReduceFn GetReduce(tcclDataType_t dt, tcclRedOp_t op);
DivideFn GetDivide(tcclDataType_t dt);  // nullptr for integers
}

}  // namespace tccl
