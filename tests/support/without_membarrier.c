/* Runs a command with membarrier(2) refused (ENOSYS), as valgrind and some containers' seccomp
 * profiles refuse it: the library's paths for a process without heavy fences (the doorbell's
 * fenced ring, calls holding their communicators by reference; src/core/asymmetric_fence.h) then
 * run under the ordinary tests. The filter is inherited by the command and every process it starts.
 *   without_membarrier COMMAND [ARGS...]                                                        */
#include <errno.h>
#include <linux/filter.h>
#include <linux/membarrier.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: without_membarrier COMMAND [ARGS...]\n");
    return 2;
  }
  struct sock_filter refuse[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_membarrier, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = {(unsigned short)(sizeof(refuse) / sizeof(refuse[0])), refuse};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
    fprintf(stderr, "without_membarrier: cannot install the seccomp filter: %s\n", strerror(errno));
    return 1;
  }
  /* The check that makes a green run mean something: the call is refused now. */
  if (syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0) != -1 || errno != ENOSYS) {
    fprintf(stderr, "without_membarrier: membarrier is still answered\n");
    return 1;
  }
  execvp(argv[1], argv + 1);
  fprintf(stderr, "without_membarrier: cannot run %s: %s\n", argv[1], strerror(errno));
  return 127;
}
