/* Which single-copy mechanism to use between processes on this machine (docs/single_copy.md):
 * a child process copies B bytes that its parent owns, (1) with memcpy from a shared mapping of
 * the parent's memfd (what tcclMemAlloc buffers allow), (2) with process_vm_readv from the parent's
 * private memory (CMA, what registered buffers allow), and (3) as a plain memcpy of private memory
 * (the yardstick). Three repetitions each: the first of (1) includes populating the mapping.
 *
 *   cc -O2 perf/single_copy_probe.c -o /tmp/single_copy_probe && /tmp/single_copy_probe $((256<<20))
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double Now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char** argv) {
  size_t bytes = argc > 1 ? (size_t)atoll(argv[1]) : (size_t)256 << 20;
  int fd = memfd_create("probe", 0);
  if (fd < 0 || ftruncate(fd, (off_t)bytes) != 0) return perror("memfd"), 1;
  char* shared = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  char* priv = malloc(bytes);
  if (shared == MAP_FAILED || !priv) return perror("alloc"), 1;
  memset(shared, 1, bytes);
  memset(priv, 2, bytes);
  pid_t parent = getpid();
  pid_t child = fork();
  if (child == 0) {
    char* mapped = mmap(NULL, bytes, PROT_READ, MAP_SHARED, fd, 0);
    char* dst = malloc(bytes);
    memset(dst, 0, bytes);
    for (int rep = 0; rep < 3; ++rep) {
      double t = Now();
      memcpy(dst, mapped, bytes);
      printf("%zu B  memcpy from the parent's mapped memfd: %6.2f GB/s\n", bytes, bytes / (Now() - t) / 1e9);
    }
    for (int rep = 0; rep < 3; ++rep) {
      struct iovec local = {dst, bytes}, remote = {priv, bytes};
      double t = Now();
      ssize_t n = process_vm_readv(parent, &local, 1, &remote, 1, 0);
      double s = Now() - t;
      if (n != (ssize_t)bytes) printf("process_vm_readv: %zd of %zu bytes\n", n, bytes);
      printf("%zu B  process_vm_readv (CMA):                %6.2f GB/s\n", bytes, bytes / s / 1e9);
    }
    for (int rep = 0; rep < 3; ++rep) {
      double t = Now();
      memcpy(dst, priv, bytes);
      printf("%zu B  memcpy of private memory:              %6.2f GB/s\n", bytes, bytes / (Now() - t) / 1e9);
    }
    fflush(stdout);
    _exit(0);
  }
  waitpid(child, NULL, 0);
  return 0;
}
