/* What a first access to freshly mapped shared memory costs on this machine, with no tccl involved
 * (docs/single_copy.md, "First calls on fresh tcclMemAlloc buffers"). A memfd of B bytes is mapped
 * with MAP_POPULATE, as tcclMemAlloc maps its buffers, and written three times; then a second
 * mapping of the same pages (as a peer maps a tcclMemAlloc buffer) is read three times. Private
 * anonymous memory, also populated, is written first for comparison. The page
 * faults counted around each pass show whether the kernel's fault path is involved: with
 * MAP_POPULATE there are none, so a slow first pass is not tccl's and not a page fault (on the
 * development VM, a Firecracker microVM, the hypervisor backing memory on first touch would fit).
 *
 *   cc -O2 perf/first_touch_probe.c -o /tmp/first_touch_probe && /tmp/first_touch_probe $((16<<20))
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static double Now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static long Faults(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt + u.ru_majflt;
}

/* One timed pass: copies `from` into `to`, or fills `to` with `fill` when `from` is NULL. */
static void Pass(const char* what, int pass, unsigned char* to, const unsigned char* from, int fill, size_t bytes) {
  long f = Faults();
  double t = Now();
  if (from)
    memcpy(to, from, bytes);
  else
    memset(to, fill, bytes);
  t = Now() - t;
  printf("%-42s pass %d: %8.2f ms, %ld faults\n", what, pass, t * 1e3, Faults() - f);
}

int main(int argc, char** argv) {
  size_t bytes = argc > 1 ? (size_t)strtoull(argv[1], NULL, 0) : (size_t)16 << 20;
  int fd = memfd_create("first-touch", MFD_CLOEXEC);
  if (fd < 0 || ftruncate(fd, (off_t)bytes) != 0) return perror("memfd"), 1;
  unsigned char* own = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  unsigned char* peer = mmap(NULL, bytes, PROT_READ, MAP_SHARED | MAP_POPULATE, fd, 0);
  unsigned char* dst = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (own == MAP_FAILED || peer == MAP_FAILED || dst == MAP_FAILED) return perror("mmap"), 1;
  printf("# %zu bytes (%zu pages); ms per pass, page faults during it\n", bytes, bytes / (size_t)sysconf(_SC_PAGESIZE));
  /* Private memory too, which is also the destination of the reads below. */
  for (int i = 0; i < 2; ++i) Pass("write private anonymous memory,", i + 1, dst, NULL, i, bytes);
  for (int i = 0; i < 3; ++i) Pass("write through the owner's mapping,", i + 1, own, NULL, i + 1, bytes);
  for (int i = 0; i < 3; ++i) Pass("read through a second mapping,", i + 1, dst, peer, 0, bytes);
  return 0;
}
