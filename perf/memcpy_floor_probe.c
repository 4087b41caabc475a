/* The memory floor under large 2-rank collectives on this machine, measured beside them: T threads
 * (default 2, one per rank) each memcpy their own buffer of MiB (default 256) at the same moment,
 * best of 7 passes per thread, buffers written first so no page is faulted in a timed pass.
 * Through the shared-memory rings every byte a rank sends is copied twice (into the ring and out
 * of it), so a rank of the in-place 2-rank all-gather (its block in, the peer's block out) does
 * the work of one memcpy of the whole message, and one of the in-place two-shot all-reduce (half
 * the message out and in twice) the work of two (docs/performance.md, "What bounds the 2-rank
 * 256 MiB cells"). glibc picks its copy loop by size, so compare at the message's own size.
 *
 * With a third argument 1 the threads copy with non-temporal (streaming) stores instead of memcpy:
 * glibc's memcpy streams only from its `x86_non_temporal_threshold`, 3/4 of the cache size it
 * derives from CPUID (`/lib64/ld-linux-x86-64.so.2 --list-tunables`): 192 MiB on the 2026-11-27
 * development VM, whose hypervisor reports a 256 MiB L3 there against 32 MiB in sysfs, so below it
 * every line a large memcpy writes was read from memory first (docs/performance.md, "Local copies
 * into their final place, stored past the cache").
 *
 *   cc -O2 -pthread perf/memcpy_floor_probe.c -o /tmp/memcpy_floor_probe
 *   /tmp/memcpy_floor_probe [threads] [MiB] [0 memcpy | 1 streaming stores]
 *   for m in 2 8 32 128 256; do /tmp/memcpy_floor_probe 2 $m 0; /tmp/memcpy_floor_probe 2 $m 1; done
 */
#define _GNU_SOURCE
#include <emmintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static size_t g_bytes;
static int g_stream;
static pthread_barrier_t g_start;
static double g_best[64];

static double Now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

/* A line per iteration: unaligned loads, 16-byte streaming stores (malloc aligns dst to 16 bytes). */
static void StreamCopy(char* d, const char* s, size_t n) {
  for (; n >= 64; n -= 64, d += 64, s += 64) {
    const __m128i a = _mm_loadu_si128((const __m128i*)s), b = _mm_loadu_si128((const __m128i*)(s + 16));
    const __m128i c = _mm_loadu_si128((const __m128i*)(s + 32)), e = _mm_loadu_si128((const __m128i*)(s + 48));
    _mm_stream_si128((__m128i*)d, a);
    _mm_stream_si128((__m128i*)(d + 16), b);
    _mm_stream_si128((__m128i*)(d + 32), c);
    _mm_stream_si128((__m128i*)(d + 48), e);
  }
  memcpy(d, s, n);
  _mm_sfence();
}

static void* Copier(void* arg) {
  const int id = (int)(long)arg;
  char* src = malloc(g_bytes);
  char* dst = malloc(g_bytes);
  if (!src || !dst) {
    perror("malloc");
    exit(1);
  }
  memset(src, 1, g_bytes);
  memset(dst, 2, g_bytes);
  g_best[id] = 1e9;
  for (int pass = 0; pass < 7; ++pass) {
    pthread_barrier_wait(&g_start);  // every thread copies at the same moment
    const double t0 = Now();
    if (g_stream)
      StreamCopy(dst, src, g_bytes);
    else
      memcpy(dst, src, g_bytes);
    __asm__ volatile("" ::"r"(dst) : "memory");  // the copy is used
    const double t = Now() - t0;
    if (t < g_best[id]) g_best[id] = t;
  }
  free(src);
  free(dst);
  return NULL;
}

int main(int argc, char** argv) {
  const int threads = argc > 1 ? atoi(argv[1]) : 2;
  const long mib = argc > 2 ? atol(argv[2]) : 256;
  g_stream = argc > 3 ? atoi(argv[3]) : 0;
  if (threads < 1 || threads > 64 || mib < 1) {
    fprintf(stderr, "usage: %s [threads 1-64] [MiB] [0 memcpy | 1 streaming stores]\n", argv[0]);
    return 2;
  }
  g_bytes = (size_t)mib << 20;
  pthread_barrier_init(&g_start, NULL, (unsigned)threads);
  pthread_t t[64];
  for (long i = 0; i < threads; ++i) pthread_create(&t[i], NULL, Copier, (void*)i);
  double worst = 0;
  for (int i = 0; i < threads; ++i) {
    pthread_join(t[i], NULL);
    if (g_best[i] > worst) worst = g_best[i];
  }
  printf("%d threads, each %s of %ld MiB at once: best pass of the slowest thread %.1f ms (%.1f GB/s per thread)\n",
         threads, g_stream ? "streamed copy" : "memcpy", mib, worst * 1e3, (double)g_bytes / worst / 1e9);
  return 0;
}
