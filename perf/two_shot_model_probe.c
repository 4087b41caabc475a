/* A model of the 2-rank two-shot all-reduce out of place, with no library: two ranks (threads, or
 * processes with `procs` 1) exchanging 128 KiB slices through two shared 1 MiB rings, spinning on
 * their heads and tails. Per slice a rank copies the peer's half of it into its ring (the
 * exchange), reduces its own half with what the peer sent, sends the reduced slice (the gather)
 * and copies the peer's reduced slice into its final place with streaming stores. Six ways to
 * reduce and send (docs/performance.md, "The reduced half written straight into the send"):
 *   0 current: reduce into the output with ordinary stores (each line read from memory first),
 *     then copy the slice from the output into the ring;
 *   1 forward: one pass storing each result twice, streamed into the output and cached into the
 *     ring, the slice published whole;
 *   2 forward in 16 KiB pieces, each published as it is made (the receivers take pieces as they
 *     come);
 *   3 as 2 through a 16 KiB bounce buffer (reduce into it, stream it out, copy it into the ring);
 *   4 as 2 reduced straight into the ring in sub-pieces, each streamed on into the output;
 *   5 as 3 with a bounce of one sub-piece.
 * Sub-pieces: `sub` bytes (default 2048). Prints the slower rank's best pass and its mean pass
 * after the first (tessera-perf reports means). The output is checked on the last pass.
 *
 *   cc -O2 -mavx2 -pthread perf/two_shot_model_probe.c -o /tmp/two_shot_model_probe
 *   /tmp/two_shot_model_probe MiB mode [sub] [procs]
 *   for r in 1 2 3; do for m in 0 2 4 5; do /tmp/two_shot_model_probe 256 $m; done; done
 */
#define _GNU_SOURCE
#include <immintrin.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { kSlice = 128 << 10, kRing = 1 << 20, kPiece = 16 << 10 };
struct Ring {
  _Alignas(64) _Atomic uint64_t head;
  _Alignas(64) _Atomic uint64_t tail;
  _Alignas(64) unsigned char data[kRing];
};
static struct Ring* g_ring[2];  // g_ring[r]: written by rank r, read by the other
static size_t g_floats, g_sub = 512;  // floats per buffer and per sub-piece
static int g_mode;
static const int kPasses = 7;
static pthread_barrier_t* g_start;
static double g_best[2], g_mean[2];

static double Now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}
static void CopyStreamed(float* d, const float* s, size_t n) {
  for (size_t i = 0; i < n; i += 8) _mm256_stream_ps(d + i, _mm256_loadu_ps(s + i));
}
static void Add(float* o, const float* a, const float* b, size_t n) {
  for (size_t i = 0; i < n; i += 8) _mm256_storeu_ps(o + i, _mm256_add_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i)));
}
static void AddTwice(float* o, float* ring, const float* a, const float* b, size_t n) {
  for (size_t i = 0; i < n; i += 8) {
    __m256 v = _mm256_add_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i));
    _mm256_stream_ps(o + i, v);
    _mm256_store_ps(ring + i, v);
  }
}
// The sender's next slice in its ring, once there is room for it (the ring holds whole slices).
static float* SendSlot(struct Ring* q, uint64_t* head) {
  *head = atomic_load_explicit(&q->head, memory_order_relaxed);
  while (*head + kSlice - atomic_load_explicit(&q->tail, memory_order_acquire) > kRing) _mm_pause();
  return (float*)(q->data + *head % kRing);
}
static void Publish(struct Ring* q, uint64_t head) { atomic_store_explicit(&q->head, head, memory_order_release); }
// The receiver's next slice, and a wait until its first `bytes` are in.
static const float* RecvSlot(struct Ring* q, uint64_t* tail) {
  *tail = atomic_load_explicit(&q->tail, memory_order_relaxed);
  return (const float*)(q->data + *tail % kRing);
}
static void WaitFor(struct Ring* q, uint64_t tail, size_t bytes) {
  while (atomic_load_explicit(&q->head, memory_order_acquire) < tail + bytes) _mm_pause();
}
static void Taken(struct Ring* q, uint64_t tail) { atomic_store_explicit(&q->tail, tail, memory_order_release); }

// Reduces piece [k, k + p) of the slice (floats) into the output at `o` and the ring at `ring`.
static void ReducePiece(float* o, float* ring, const float* own, const float* got, size_t p) {
  static __thread float bounce[kPiece / 4] __attribute__((aligned(64)));
  if (g_mode == 3) {
    Add(bounce, own, got, p);
    CopyStreamed(o, bounce, p);
    memcpy(ring, bounce, p * 4);
  } else if (g_mode == 4) {
    for (size_t u = 0; u < p; u += g_sub) {
      Add(ring + u, own + u, got + u, g_sub);
      CopyStreamed(o + u, ring + u, g_sub);
    }
  } else if (g_mode == 5) {
    for (size_t u = 0; u < p; u += g_sub) {
      Add(bounce, own + u, got + u, g_sub);
      CopyStreamed(o + u, bounce, g_sub);
      memcpy(ring + u, bounce, g_sub * 4);
    }
  } else {
    AddTwice(o, ring, own, got, p);
  }
}

static void* Rank(void* arg) {
  const int r = (int)(long)arg;
  const size_t n = g_floats, half = n / 2, sl = kSlice / 4, p = kPiece / 4;
  float* in = aligned_alloc(64, n * 4);
  float* out = aligned_alloc(64, n * 4);
  for (size_t i = 0; i < n; ++i) in[i] = (float)(i & 255), out[i] = 0;
  struct Ring *o = g_ring[r], *q = g_ring[1 - r];
  const size_t mine = r ? half : 0, theirs = r ? 0 : half;
  double best = 1e9, sum = 0;
  for (int pass = 0; pass < kPasses; ++pass) {
    pthread_barrier_wait(g_start);
    const double t0 = Now();
    for (size_t s = 0; s < half; s += sl) {
      uint64_t h, t;
      memcpy(SendSlot(o, &h), in + theirs + s, kSlice);  // the exchange: the peer's half of the slice
      Publish(o, h + kSlice);
      const float* got = RecvSlot(q, &t);
      float* ring = SendSlot(o, &h);
      if (g_mode == 0) {
        WaitFor(q, t, kSlice);
        Add(out + mine + s, in + mine + s, got, sl);  // reduce into the output
        Taken(q, t + kSlice);
        memcpy(ring, out + mine + s, kSlice);  // the gather sends it from there
        Publish(o, h + kSlice);
      } else if (g_mode == 1) {
        WaitFor(q, t, kSlice);
        AddTwice(out + mine + s, ring, in + mine + s, got, sl);
        _mm_sfence();
        Taken(q, t + kSlice);
        Publish(o, h + kSlice);
      } else {
        for (size_t k = 0; k < sl; k += p) {
          WaitFor(q, t, (k + p) * 4);
          ReducePiece(out + mine + s + k, ring + k, in + mine + s + k, got + k, p);
          _mm_sfence();
          Publish(o, h + (k + p) * 4);
          Taken(q, t + (k + p) * 4);
        }
      }
      const float* g = RecvSlot(q, &t);  // the peer's reduced slice, into its final place
      for (size_t k = 0; k < sl; k += (g_mode >= 2 ? p : sl)) {
        const size_t m = g_mode >= 2 ? p : sl;
        WaitFor(q, t, (k + m) * 4);
        CopyStreamed(out + theirs + s + k, g + k, m);
        _mm_sfence();
        Taken(q, t + (k + m) * 4);
      }
    }
    const double dt = Now() - t0;
    if (dt < best) best = dt;
    if (pass > 0) sum += dt;
  }
  for (size_t i = 0; i < n; i += 4099)  // both ranks' inputs are alike: out = 2 in
    if (out[i] != 2 * in[i]) {
      fprintf(stderr, "rank %d: wrong result at %zu\n", r, i);
      exit(1);
    }
  g_best[r] = best;
  g_mean[r] = sum / (kPasses - 1);
  return NULL;
}

static void* Shared(size_t bytes, int procs) {
  void* p = procs ? mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0) : aligned_alloc(4096, bytes);
  if (p == MAP_FAILED || !p) {
    perror("memory");
    exit(1);
  }
  memset(p, 0, bytes);
  return p;
}

int main(int argc, char** argv) {
  if (argc < 3 || atoi(argv[2]) < 0 || atoi(argv[2]) > 5) {
    fprintf(stderr, "usage: %s MiB mode(0-5) [sub-piece bytes, 2048] [procs 0|1]\n", argv[0]);
    return 2;
  }
  g_floats = (strtoull(argv[1], 0, 0) << 20) / 4;
  g_mode = atoi(argv[2]);
  if (argc > 3 && atoi(argv[3]) >= 32 && (kPiece % atoi(argv[3])) == 0) g_sub = atoi(argv[3]) / 4;
  const int procs = argc > 4 && atoi(argv[4]);
  for (int i = 0; i < 2; ++i) g_ring[i] = Shared(sizeof(struct Ring), procs);
  g_start = Shared(4096, procs);
  double* results = Shared(4096, procs);
  pthread_barrierattr_t ba;
  pthread_barrierattr_init(&ba);
  if (procs) pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED);
  pthread_barrier_init(g_start, &ba, 2);
  if (procs) {
    const pid_t child = fork();
    const int me = child == 0 ? 1 : 0;
    Rank((void*)(long)me);
    results[2 * me] = g_best[me];
    results[2 * me + 1] = g_mean[me];
    if (child == 0) _exit(0);
    waitpid(child, NULL, 0);
    g_best[1] = results[2];
    g_mean[1] = results[3];
  } else {
    pthread_t t[2];
    for (long i = 0; i < 2; ++i) pthread_create(&t[i], NULL, Rank, (void*)i);
    for (int i = 0; i < 2; ++i) pthread_join(t[i], NULL);
  }
  const char* name[] = {"current", "forward", "forward in pieces", "pieces via a bounce", "sub-pieces into the ring",
                        "sub-pieces via a bounce"};
  printf("%s MiB, %s: slower rank's best pass %.3f ms, mean after the first %.3f ms\n", argv[1], name[g_mode],
         (g_best[0] > g_best[1] ? g_best[0] : g_best[1]) * 1e3, (g_mean[0] > g_mean[1] ? g_mean[0] : g_mean[1]) * 1e3);
  return 0;
}
