// The least a small collective between two processes can cost on this machine: cache lines
// handed between two cores, with no library around them (docs/performance.md, "The floor under
// small collectives at 2 ranks"). Standalone, not part of the build:
//
//   gcc -O2 perf/handover_floor_probe.c -o /tmp/handover_floor_probe && /tmp/handover_floor_probe [N]
//
// Two processes share a mapping with a 256-line ring per direction; each line carries a flag, as
// tccl's LL lines do (transports/shm/ll_ring.h). Two patterns, each run 3 times, best printed:
//   exchange - each process writes its line i, then waits for the peer's line i: what a 2-rank
//              all-reduce, all-gather, reduce-scatter or all-to-all of one line must do per call
//              (neither side can finish call i before the other has started it); "claiming": each
//              also claims its next line (PREFETCHW) once the peer's line is in;
//   stream   - one process writes line i (waiting only when the ring is full; the reader hands
//              lines back a quarter ring at a time), the other waits for each line: what a 2-rank
//              broadcast of one line must do per call, the root never waiting for the receiver;
//   stream + N stores - the same, the writer also making N stores (default 300, at most 1000) to
//              its own memory per line (300: about what one tccl call makes, callgrind's Dw per
//              call), and the same writer alone, with no reader. x86 stores become visible in program order, so stores made
//              after the shared line's wait until the reader's copy of that line is invalidated;
//   stream + N stores, claiming - the same writer, which also asks for ownership of its next ring
//              line (PREFETCHW) right after writing the current one, as tccl's sender does after
//              each step (LLSender::ClaimNext): the invalidation then overlaps the private stores.
// Time per iteration = per call. The processes are not pinned (neither tessera-run nor mpirun pins
// here), so the scheduler places them as it places the ranks.
#define _GNU_SOURCE
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { kLines = 256, kReturnBatch = kLines / 4, kIters = 2000000, kRuns = 3 };

typedef struct {
  volatile uint64_t flag;
  char payload[56];
} Line;

typedef struct {
  Line lines[2][kLines];          // [direction]
  volatile uint64_t consumed[16]; // stream: lines the reader has handed back (own cache line)
} Shared;

static double Now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

// PREFETCHW: ownership of a line without a store (asm: the builtin emits it only with -mprfchw);
// every x86-64 CPU this runs on in practice has it (AMD since K8, Intel since Broadwell).
static void Claim(const Line* line) { __asm__ volatile("prefetchw %0" ::"m"(*line)); }

static void ExchangeWith(Shared* s, int me, int claim) {
  Line* out = s->lines[me];
  Line* in = s->lines[1 - me];
  for (uint64_t i = 0; i < kIters; ++i) {
    out[i % kLines].flag = i + 1;
    while (in[i % kLines].flag != i + 1) _mm_pause();
    if (claim) Claim(&out[(i + 1) % kLines]);  // after the wait, as tccl claims after a step
  }
}
static void Exchange(Shared* s, int me) { ExchangeWith(s, me, 0); }
static void ExchangeClaiming(Shared* s, int me) { ExchangeWith(s, me, 1); }

enum { kMaxPrivateStores = 1000 };
static volatile uint64_t g_private[kMaxPrivateStores * 8];  // one store per cache line
static int g_stores = 300;

static void Writer(Shared* s, int stores, int reader, int claim) {
  Line* ring = s->lines[0];
  for (uint64_t i = 0; i < kIters; ++i) {
    while (reader && i >= s->consumed[0] + kLines) _mm_pause();
    ring[i % kLines].flag = i + 1;
    if (claim) Claim(&ring[(i + 1) % kLines]);
    for (int k = 0; k < stores; ++k) g_private[k * 8] = i;
  }
}

static void StreamWith(Shared* s, int me, int stores, int claim) {
  Line* ring = s->lines[0];
  if (me == 0) {
    Writer(s, stores, 1, claim);
  } else {  // reader
    for (uint64_t i = 0; i < kIters; ++i) {
      while (ring[i % kLines].flag != i + 1) _mm_pause();
      if ((i + 1) % kReturnBatch == 0) s->consumed[0] = i + 1;
    }
  }
}
static void Stream(Shared* s, int me) { StreamWith(s, me, 0, 0); }
static void StreamStores(Shared* s, int me) { StreamWith(s, me, g_stores, 0); }
static void StreamStoresClaiming(Shared* s, int me) { StreamWith(s, me, g_stores, 1); }
// No reader: the child returns at once and the parent writes alone.
static void AloneStores(Shared* s, int me) {
  if (me == 0) Writer(s, g_stores, 0, 0);
}

// Runs `body` in this process and a child over a fresh shared mapping; returns us per iteration
// as this process saw it (the child is waited for, so both have finished).
static double RunPair(void (*body)(Shared*, int)) {
  Shared* s = mmap(NULL, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (s == MAP_FAILED) return perror("mmap"), -1;
  pid_t child = fork();
  if (child < 0) return perror("fork"), -1;
  const int me = child == 0;
  const double t0 = Now();
  body(s, me);
  if (me) _exit(0);
  waitpid(child, NULL, 0);
  const double us = (Now() - t0) / kIters * 1e6;
  munmap(s, sizeof(Shared));
  return us;
}

int main(int argc, char** argv) {
  if (argc > 1) g_stores = atoi(argv[1]);
  if (g_stores < 0 || g_stores > kMaxPrivateStores) return fprintf(stderr, "N: 0..%d\n", kMaxPrivateStores), 2;
  char streamName[40], claimName[48], aloneName[40];
  snprintf(streamName, sizeof streamName, "stream + %d stores", g_stores);
  snprintf(claimName, sizeof claimName, "stream + %d stores, claiming", g_stores);
  snprintf(aloneName, sizeof aloneName, "alone + %d stores", g_stores);
  const char* names[6] = {"exchange", "exchange, claiming", "stream", streamName, claimName, aloneName};
  void (*bodies[6])(Shared*, int) = {Exchange, ExchangeClaiming, Stream, StreamStores, StreamStoresClaiming,
                                     AloneStores};
  for (int p = 0; p < 6; ++p) {
    double best = 1e9;
    printf("%-29s us per call:", names[p]);
    for (int r = 0; r < kRuns; ++r) {
      const double us = RunPair(bodies[p]);
      printf(" %.3f", us);
      if (us < best) best = us;
    }
    printf("  (best %.3f)\n", best);
  }
  return 0;
}
