/* The 2-rank two-shot's out-of-place reduce, out = a + b over large float arrays slice by slice,
 * each slice read back at once (as the peer reads a reduced slice while it is in cache), with
 * four ways of storing the output: ordinary stores (which read each output line from memory
 * first), non-temporal stores, a reduce into a 4 KiB bounce buffer copied out with `rep movsb`
 * (which can write whole lines without reading them), and CLZERO before each ordinary store
 * (docs/performance.md, "Stores that skip the read"). On the development VM (AMD EPYC, Zen 3,
 * AVX2) none beat ordinary stores once the read-back counts; CLZERO ran ~80x slower.
 *
 *   cc -O2 -mavx2 perf/output_store_probe.c -o /tmp/output_store_probe && /tmp/output_store_probe [MiB] [slice KiB]
 */
#define _GNU_SOURCE
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static void add_store(float* o, const float* a, const float* b, size_t n) {
  for (size_t i = 0; i < n; i += 8) _mm256_store_ps(o + i, _mm256_add_ps(_mm256_load_ps(a + i), _mm256_load_ps(b + i)));
}
static void add_stream(float* o, const float* a, const float* b, size_t n) {
  for (size_t i = 0; i < n; i += 8) _mm256_stream_ps(o + i, _mm256_add_ps(_mm256_load_ps(a + i), _mm256_load_ps(b + i)));
}
static void movsb(void* d, const void* s, size_t n) { asm volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory"); }
static float bounce[4096] __attribute__((aligned(64)));
static size_t B = 1024;  // bounce floats
static void add_bounce(float* o, const float* a, const float* b, size_t n) {
  for (size_t i = 0; i < n; i += B) { add_store(bounce, a + i, b + i, B); movsb(o + i, bounce, B * 4); }
}
static void add_clzero(float* o, const float* a, const float* b, size_t n) {
  for (size_t i = 0; i < n; i += 8) { asm volatile("clzero" : : "a"(o + i) : "memory"); _mm256_store_ps(o + i, _mm256_add_ps(_mm256_load_ps(a + i), _mm256_load_ps(b + i))); }
}
static float readback(const float* o, size_t n) {
  __m256 s = _mm256_setzero_ps();
  for (size_t i = 0; i < n; i += 8) s = _mm256_add_ps(s, _mm256_load_ps(o + i));
  float t[8]; _mm256_storeu_ps(t, s); return t[0] + t[7];
}
int main(int argc, char** argv) {
  size_t bytes = (argc > 1 ? strtoull(argv[1], 0, 0) : 128) << 20, slice = (argc > 2 ? strtoull(argv[2], 0, 0) : 128) << 10;
  if (argc > 3) B = strtoull(argv[3], 0, 0);
  size_t n = bytes / 4, sn = slice / 4;
  float *a = aligned_alloc(64, bytes), *b = aligned_alloc(64, bytes), *o = aligned_alloc(64, bytes);
  for (size_t i = 0; i < n; ++i) { a[i] = i & 1023; b[i] = 1; o[i] = 0; }
  void (*fn[])(float*, const float*, const float*, size_t) = {add_store, add_stream, add_bounce, add_clzero};
  const char* name[] = {"store", "stream", "bounce+movsb", "clzero+store"};
  double best[4][2]; for (int k = 0; k < 4; ++k) best[k][0] = best[k][1] = 1e9;
  volatile float sink = 0;
  for (int rep = 0; rep < 5; ++rep)
    for (int k = 0; k < 4; ++k) {
      double t0 = now();
      for (size_t i = 0; i < n; i += sn) fn[k](o + i, a + i, b + i, sn);
      double t1 = now();
      for (size_t i = 0; i < n; i += sn) { fn[k](o + i, a + i, b + i, sn); sink += readback(o + i, sn); }
      double t2 = now();
      if (t1 - t0 < best[k][0]) best[k][0] = t1 - t0;
      if (t2 - t1 < best[k][1]) best[k][1] = t2 - t1;
    }
  for (int k = 0; k < 4; ++k)
    printf("%-14s reduce %6.2f ms (%5.1f GB/s of a+b+out)   reduce+readback %6.2f ms\n", name[k], best[k][0] * 1e3,
           3.0 * bytes / best[k][0] / 1e9, best[k][1] * 1e3);
  return sink == 12345;
}
