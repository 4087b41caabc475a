// The AVX-512 kernels for CPUs that also have AVX512_BF16 and AVX-512DQ (AMD Zen 4, Intel Cooper
// Lake and Sapphire Rapids on): reduce_avx512.cc compiled again with those extensions, in namespace
// avx512_bf16, where bfloat16 narrows with VCVTNE2PS2BF16 — bit for bit the same results
// (tests/kernels_test.cc runs both builds where the CPU has them). One source for both builds, so
// the two cannot drift apart.
#define TCCL_AVX512_BF16_BUILD 1
#include "kernels/host/reduce_avx512.cc"
