// The AVX-512 kernels for CPUs that also have AVX512-FP16 (Intel Sapphire Rapids on; every such
// CPU has AVX512_BF16 too): reduce_avx512.cc compiled with both TCCL_AVX512_BF16_BUILD and
// TCCL_AVX512_FP16_BUILD, in namespace avx512_fp16, where float16 sums and products need no
// conversion — bit for bit the same results (tests/kernels_test.cc checks every pair of values).
#define TCCL_AVX512_BF16_BUILD 1
#define TCCL_AVX512_FP16_BUILD 1
#include "kernels/host/reduce_avx512.cc"
