/* The 2-rank two-shot all-reduce's memory work per rank, out of place, in two threads at once (one
 * per rank), slice by slice (128 KiB): the exchange's copy of the peer's half into a ring, the
 * reduce of this rank's half, the gather's send of the reduced slice and the copy of the peer's
 * reduced slice into its final place (streamed). Three ways for the reduce and the send:
 *   0 current: reduce into the output with ordinary stores (each line read from memory first),
 *     then copy the slice from the output (in cache) into the send's ring;
 *   1 forward: one pass storing each result twice, streamed into the output and cached into the
 *     ring (no output line read, no read-back);
 *   2 slot:    reduce into a cached slot, copy it into the ring and stream it into the output.
 * The rings here are private to each thread: no line moves between cores, unlike the library's.
 * It predicted forward 8-25% faster at 16 and 256 MiB; built into the library through a bounce
 * buffer it measured level; perf/two_shot_model_probe.c, with shared rings, showed why (docs/performance.md,
 * "The reduced half written straight into the send").
 *
 *   cc -O2 -mavx2 -pthread perf/forward_store_probe.c -o /tmp/forward_store_probe
 *   for m in 16 256; do for k in 0 1 2; do /tmp/forward_store_probe $m $k; done; done
 */
#define _GNU_SOURCE
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static size_t g_n, g_slice;  // floats per buffer and per slice
static int g_mode;
static pthread_barrier_t g_start;
static double g_best[2];

static double Now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}
static void Copy(float* d, const float* s, size_t n) {
  for (size_t i = 0; i < n; i += 8) _mm256_store_ps(d + i, _mm256_load_ps(s + i));
}
static void CopyStreamed(float* d, const float* s, size_t n) {
  for (size_t i = 0; i < n; i += 8) _mm256_stream_ps(d + i, _mm256_load_ps(s + i));
}
static void Add(float* o, const float* a, const float* b, size_t n) {
  for (size_t i = 0; i < n; i += 8) _mm256_store_ps(o + i, _mm256_add_ps(_mm256_load_ps(a + i), _mm256_load_ps(b + i)));
}
static void AddTwice(float* o, float* ring, const float* a, const float* b, size_t n) {
  for (size_t i = 0; i < n; i += 8) {
    __m256 v = _mm256_add_ps(_mm256_load_ps(a + i), _mm256_load_ps(b + i));
    _mm256_stream_ps(o + i, v);
    _mm256_store_ps(ring + i, v);
  }
}

static void* Rank(void* arg) {
  const int id = (int)(long)arg;
  const size_t n = g_n, half = n / 2, sl = g_slice;
  float* in = aligned_alloc(64, n * 4);
  float* out = aligned_alloc(64, n * 4);
  // The exchange's ring out, the peer's slice in, the gather's ring out, the peer's reduced slice in.
  float *xOut = aligned_alloc(64, sl * 4), *xIn = aligned_alloc(64, sl * 4), *gOut = aligned_alloc(64, sl * 4),
        *gIn = aligned_alloc(64, sl * 4), *slot = aligned_alloc(64, sl * 4);
  for (size_t i = 0; i < n; ++i) in[i] = i & 255, out[i] = 0;
  for (size_t i = 0; i < sl; ++i) xOut[i] = xIn[i] = gOut[i] = gIn[i] = slot[i] = 1;
  double best = 1e9;
  for (int pass = 0; pass < 7; ++pass) {
    pthread_barrier_wait(&g_start);
    const double t0 = Now();
    for (size_t s = 0; s < half; s += sl) {
      Copy(xOut, in + half + s, sl);
      if (g_mode == 0) {
        Add(out + s, in + s, xIn, sl);
        Copy(gOut, out + s, sl);
      } else if (g_mode == 1) {
        AddTwice(out + s, gOut, in + s, xIn, sl);
      } else {
        Add(slot, in + s, xIn, sl);
        Copy(gOut, slot, sl);
        CopyStreamed(out + s, slot, sl);
      }
      CopyStreamed(out + half + s, gIn, sl);
    }
    _mm_sfence();
    const double t = Now() - t0;
    if (t < best) best = t;
  }
  g_best[id] = best;
  return NULL;
}

int main(int argc, char** argv) {
  if (argc < 3 || atoi(argv[2]) < 0 || atoi(argv[2]) > 2) {
    fprintf(stderr, "usage: %s MiB 0|1|2 (current, forward, slot)\n", argv[0]);
    return 2;
  }
  g_n = (strtoull(argv[1], 0, 0) << 20) / 4;
  g_slice = (128 << 10) / 4;
  g_mode = atoi(argv[2]);
  pthread_barrier_init(&g_start, NULL, 2);
  pthread_t t[2];
  for (long i = 0; i < 2; ++i) pthread_create(&t[i], NULL, Rank, (void*)i);
  for (int i = 0; i < 2; ++i) pthread_join(t[i], NULL);
  const char* name[] = {"current", "forward", "slot"};
  printf("%s MiB, %s: slower thread's best pass %.3f ms\n", argv[1], name[g_mode],
         (g_best[0] > g_best[1] ? g_best[0] : g_best[1]) * 1e3);
  return 0;
}
