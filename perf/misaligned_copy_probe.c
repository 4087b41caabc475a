/* memcpy's speed by size and by where the destination lies against the source's 64-byte
 * alignment, beside the vector loop of kernels/host/copy.cc (docs/performance.md, "Copies whose
 * destination is not aligned like their source"). On the development VM (AMD EPYC with FSRM,
 * glibc 2.36) memcpy ran at 1.1-3 GB/s from 4 KiB to 512 KiB with the destination 1-31 bytes
 * ahead of the source modulo 64 (8 and 16 here), where glibc uses `rep movsb`.
 *
 *   cc -O2 perf/misaligned_copy_probe.c -o /tmp/misaligned_copy_probe && /tmp/misaligned_copy_probe
 */
#include <emmintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double Now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

/* The loop of kernels/host/copy.cc: head to the destination's line, a line per iteration. */
static void LineLoop(void* dst, const void* src, size_t n) {
  unsigned char* d = dst;
  const unsigned char* s = src;
  size_t head = (64 - ((uintptr_t)d & 63)) & 63;
  if (head > n) head = n;
  memcpy(d, s, head);
  d += head, s += head, n -= head;
  for (; n >= 64; n -= 64, d += 64, s += 64) {
    __m128i a = _mm_loadu_si128((const __m128i*)s), b = _mm_loadu_si128((const __m128i*)(s + 16));
    __m128i c = _mm_loadu_si128((const __m128i*)(s + 32)), e = _mm_loadu_si128((const __m128i*)(s + 48));
    _mm_store_si128((__m128i*)d, a);
    _mm_store_si128((__m128i*)(d + 16), b);
    _mm_store_si128((__m128i*)(d + 32), c);
    _mm_store_si128((__m128i*)(d + 48), e);
  }
  memcpy(d, s, n);
}

int main(void) {
  const size_t sizes[] = {4096, 16384, 65536, 262144, 524288, 4194304};
  const size_t offsets[] = {0, 8, 16, 32, 48};
  unsigned char* a = aligned_alloc(4096, 8 << 20);
  unsigned char* b = aligned_alloc(4096, 8 << 20);
  if (!a || !b) return 1;
  memset(a, 1, 8 << 20);
  memset(b, 2, 8 << 20);
  for (int loop = 0; loop < 2; ++loop)
    for (size_t o = 0; o < sizeof offsets / sizeof *offsets; ++o) {
      printf("%-8s dst +%2zu:", loop ? "loop" : "memcpy", offsets[o]);
      for (size_t i = 0; i < sizeof sizes / sizeof *sizes; ++i) {
        const size_t n = sizes[i];
        const int reps = (int)(200000000 / n) + 3;
        const double t0 = Now();
        for (int r = 0; r < reps; ++r) {
          if (loop) LineLoop(b + offsets[o], a, n);
          else memcpy(b + offsets[o], a, n);
          __asm__ volatile("" ::"r"(b) : "memory");
        }
        printf("  %zuK %.1f", n >> 10, (double)n * reps / (Now() - t0) / 1e9);
      }
      printf("  GB/s\n");
    }
  return 0;
}
