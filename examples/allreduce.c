/* The README example: an all-reduce over ranks started by tessera-run, torchrun, mpirun or srun.
 * Built as strict C99 by the test suite (tests/CMakeLists.txt), which also runs it on 3 ranks. */
#include <stdio.h>
#include <tccl/tccl.h>

int main(void) {
  tcclComm_t comm;
  int nranks = 0, i;
  float data[1024];
  tcclResult_t r;
  if (tcclCommInitFromEnv(&comm, NULL) != tcclSuccess) {
    fprintf(stderr, "init: %s\n", tcclGetLastError(NULL));
    return 1;
  }
  tcclCommCount(comm, &nranks);
  for (i = 0; i < 1024; ++i) data[i] = 1.0f;
  r = tcclAllReduce(data, data, 1024, tcclFloat, tcclSum, comm, NULL); /* NULL stream: blocking */
  if (r != tcclSuccess) fprintf(stderr, "%s: %s\n", tcclGetErrorString(r), tcclGetLastError(comm));
  else if (data[1023] != (float)nranks) r = tcclInternalError;
  tcclCommDestroy(comm);
  return r != tcclSuccess;
}
