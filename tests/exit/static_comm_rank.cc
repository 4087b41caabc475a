// A rank whose communicator lives in a static object and is destroyed by that object's destructor,
// after main has returned — the way a C++ application's singleton or a framework's global tears
// down. The library's own tables must outlive it: this process exits 0 only if tcclCommDestroy
// succeeds there (ctest `comm_destroyed_after_main`, under tessera-run). With `--never-destroyed`
// the communicator is left alive at exit, as many programs leave NCCL's (ctest
// `comm_never_destroyed`; under ASan, no leak may be reported).
#include <tccl/tccl.h>
#include <unistd.h>

#include <cstdio>
#include <string>

namespace {

struct CommHolder {
  tcclComm_t comm = nullptr;
  bool destroy = true;
  ~CommHolder() {
    if (!comm || !destroy) return;
    const tcclResult_t r = tcclCommDestroy(comm);
    if (r != tcclSuccess) {
      fprintf(stderr, "tcclCommDestroy after main: %s: %s\n", tcclGetErrorString(r), tcclGetLastError(nullptr));
      _exit(3);  // exit's status is already set; only _exit can still report the failure
    }
  }
};

CommHolder g_holder;  // built before main, so destroyed after everything the library builds later

}  // namespace

int main(int argc, char** argv) {
  g_holder.destroy = !(argc > 1 && std::string(argv[1]) == "--never-destroyed");
  if (tcclCommInitFromEnv(&g_holder.comm, nullptr) != tcclSuccess) {
    fprintf(stderr, "init: %s\n", tcclGetLastError(nullptr));
    return 1;
  }
  float x[64];
  for (float& v : x) v = 1.0f;
  int nranks = 0;
  tcclCommCount(g_holder.comm, &nranks);
  if (tcclAllReduce(x, x, 64, tcclFloat, tcclSum, g_holder.comm, nullptr) != tcclSuccess || x[63] != (float)nranks) {
    fprintf(stderr, "all-reduce: %s\n", tcclGetLastError(g_holder.comm));
    return 2;
  }
  return 0;
}
