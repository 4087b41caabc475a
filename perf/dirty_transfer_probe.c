/* How fast one core reads a block that another core has just written, against a block nobody has
 * written since it was first read (docs/performance.md, "Two states of the VM, and what they cost").
 * A 2-rank all-gather or all-to-all through a ring is a stream of just-written lines: the sender
 * writes the ring, the receiver copies out of it. A single-copy read (CMA, a mapped buffer) of a
 * benchmark's send buffer, which no call modifies, moves lines that stay clean: after the first
 * call the reader holds them in its own cache, or reads them from memory.
 *
 * Two processes over a shared mapping; per round the writer rewrites blocks D1 and D2 (timing its
 * writes of D1, whose lines the reader read in the round before) and raises a flag; the reader
 * copies D1 with memcpy and D2 with process_vm_readv (CMA, how Open MPI reads a peer's buffer), then
 * block C (clean: written once, before the first round) both ways, into private memory, each copy
 * timed; then the reader answers and the next round starts.
 *
 *   cc -O2 -mclflushopt perf/dirty_transfer_probe.c -o /tmp/dirty_transfer_probe
 *   /tmp/dirty_transfer_probe [bytes] [rounds] [memset|claim|stream] [flush]
 *
 * Prints the median GB/s of each copy (and the best of the memcpy ones). Run it beside the benchmarks: its figures move with
 * the VM's state as theirs do.
 */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <immintrin.h>

static double Now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static int Cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

/* How the writer rewrites D1: "memset"; "claim" (PREFETCHW every line of a 16 KiB piece, then
 * memset it); "stream" (non-temporal stores, which write whole lines to memory without asking the
 * reader for them first). */
static void Rewrite(char* p, int v, size_t bytes, const char* how) {
  if (strcmp(how, "claim") == 0) {
    for (size_t off = 0; off < bytes; off += 16384) {
      size_t n = bytes - off < 16384 ? bytes - off : 16384;
      for (size_t i = 0; i < n; i += 64) __builtin_prefetch(p + off + i, 1);
      memset(p + off, v, n);
    }
  } else if (strcmp(how, "stream") == 0) {
    __m128i x = _mm_set1_epi8((char)v);
    for (size_t i = 0; i < bytes; i += 16) _mm_stream_si128((__m128i*)(p + i), x);
    _mm_sfence();
  } else {
    memset(p, v, bytes);
  }
}

struct Flags {
  _Alignas(64) atomic_int written;  /* round whose block D the writer has finished */
  _Alignas(64) atomic_int read;     /* round the reader has finished */
};

int main(int argc, char** argv) {
  size_t bytes = argc > 1 ? (size_t)atoll(argv[1]) : (size_t)512 << 10;
  int rounds = argc > 2 ? atoi(argv[2]) : 400;
  const char* how = argc > 3 ? argv[3] : "memset";
  const int flush = argc > 4 && strcmp(argv[4], "flush") == 0;
  size_t total = 4096 + 3 * bytes + sizeof(double) * (size_t)rounds;
  char* shm = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shm == MAP_FAILED) return perror("mmap"), 1;
  struct Flags* f = (struct Flags*)shm;
  char* dirty = shm + 4096;
  char* dirty2 = dirty + bytes;
  char* clean = dirty2 + bytes;
  double* tWrite = (double*)(clean + bytes);  /* the writer's GB/s per round, for the reader to print */
  memset(shm, 0, total);
  memset(clean, 7, bytes);
  pid_t child = fork();
  if (child < 0) return perror("fork"), 1;
  if (child == 0) { /* the writer */
    for (int r = 1; r <= rounds; ++r) {
      double t0 = Now();
      Rewrite(dirty, r & 0xff, bytes, how);
      tWrite[r - 1] = bytes / (Now() - t0) / 1e9;
      memset(dirty2, r & 0xff, bytes);
      atomic_store_explicit(&f->written, r, memory_order_release);
      while (atomic_load_explicit(&f->read, memory_order_acquire) != r) {
      }
    }
    _exit(0);
  }
  char* dst = malloc(bytes);
  double* tDirty = malloc(sizeof(double) * rounds);
  double* tClean = malloc(sizeof(double) * rounds);
  double* tDirtyCma = malloc(sizeof(double) * rounds);
  double* tCleanCma = malloc(sizeof(double) * rounds);
  if (!dst || !tDirty || !tClean || !tDirtyCma || !tCleanCma) return perror("malloc"), 1;
  pid_t writer = child;
  memset(dst, 0, bytes);
  int wrong = 0;
  for (int r = 1; r <= rounds; ++r) {
    while (atomic_load_explicit(&f->written, memory_order_acquire) != r) {
    }
    double t0 = Now();
    memcpy(dst, dirty, bytes);
    double t1 = Now();
    wrong += dst[bytes / 2] != (char)(r & 0xff);
    /* "flush": the reader hands the lines it read back (out of every cache) before the writer
       rewrites them. Not timed here: it is part of the reader's copy in a ring. */
    if (flush)
      for (size_t i = 0; i < bytes; i += 64) _mm_clflushopt(dirty + i);
    memcpy(dst, clean, bytes);
    double t2 = Now();
    struct iovec local = {dst, bytes}, remote = {dirty2, bytes};
    if (process_vm_readv(writer, &local, 1, &remote, 1, 0) != (ssize_t)bytes) return perror("process_vm_readv"), 1;
    double t3 = Now();
    wrong += dst[bytes / 2] != (char)(r & 0xff);
    remote.iov_base = clean;
    if (process_vm_readv(writer, &local, 1, &remote, 1, 0) != (ssize_t)bytes) return perror("process_vm_readv"), 1;
    double t4 = Now();
    tDirty[r - 1] = bytes / (t1 - t0) / 1e9;
    tClean[r - 1] = bytes / (t2 - t1) / 1e9;
    tDirtyCma[r - 1] = bytes / (t3 - t2) / 1e9;
    tCleanCma[r - 1] = bytes / (t4 - t3) / 1e9;
    atomic_store_explicit(&f->read, r, memory_order_release);
  }
  waitpid(child, NULL, 0);
  qsort(tDirty, rounds, sizeof(double), Cmp);
  qsort(tClean, rounds, sizeof(double), Cmp);
  qsort(tDirtyCma, rounds, sizeof(double), Cmp);
  qsort(tCleanCma, rounds, sizeof(double), Cmp);
  qsort(tWrite, rounds, sizeof(double), Cmp);
  printf("%zu bytes, %d rounds, GB/s: read just written by the other core: memcpy %.1f (best %.1f), CMA %.1f; "
         "read clean: memcpy %.1f (best %.1f), CMA %.1f; the writer rewriting lines the reader read: %.1f%s\n",
         bytes, rounds, tDirty[rounds / 2], tDirty[rounds - 1], tDirtyCma[rounds / 2], tClean[rounds / 2],
         tClean[rounds - 1], tCleanCma[rounds / 2], tWrite[rounds / 2], wrong ? "; WRONG DATA" : "");
  return wrong != 0;
}
