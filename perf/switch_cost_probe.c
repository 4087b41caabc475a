// What a context switch costs on this machine, for ranks that share a core (docs/performance.md,
// "Small messages at 4 and 8 ranks"). Standalone, not part of the build:
//
//   gcc -O2 -pthread perf/switch_cost_probe.c -o /tmp/switch_cost_probe && /tmp/switch_cost_probe
//
// Prints the time of a bare system call, of sched_yield with nobody else on the core, and of
// sched_yield between two processes and between two threads pinned to CPU 0, where every yield
// hands the core over (one yield of each = two switches).
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { kCalls = 100000 };

static double Now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static void PinToCpu0(void) {
  cpu_set_t s;
  CPU_ZERO(&s);
  CPU_SET(0, &s);
  sched_setaffinity(0, sizeof(s), &s);
}

// Microseconds per sched_yield over kCalls calls.
static double YieldLoop(void) {
  double t0 = Now();
  for (int i = 0; i < kCalls; ++i) sched_yield();
  return (Now() - t0) / kCalls * 1e6;
}

static void* YieldThread(void* out) {
  *(double*)out = YieldLoop();
  return NULL;
}

int main(void) {
  PinToCpu0();
  double t0 = Now();
  for (int i = 0; i < kCalls; ++i) syscall(SYS_getppid);
  printf("system call (getppid):              %.2f us\n", (Now() - t0) / kCalls * 1e6);
  printf("sched_yield, alone on the core:     %.2f us\n", YieldLoop());

  pid_t child = fork();
  if (child == 0) {  // pinned too: affinity is inherited
    YieldLoop();
    _exit(0);
  }
  double processes = YieldLoop();
  waitpid(child, NULL, 0);
  printf("sched_yield, two processes, 1 core: %.2f us per yield (~%.2f us per switch)\n", processes,
         processes / 2);

  pthread_t t[2];
  double threads[2];
  for (int i = 0; i < 2; ++i) pthread_create(&t[i], NULL, YieldThread, &threads[i]);
  for (int i = 0; i < 2; ++i) pthread_join(t[i], NULL);
  printf("sched_yield, two threads, 1 core:   %.2f us per yield (~%.2f us per switch)\n", threads[0],
         threads[0] / 2);
  return 0;
}
