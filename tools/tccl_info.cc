// tccl-info: what this tccl build is and how it is configured (SPEC section 8).
//   -v  version, build features, library path
//   -c  every parameter with its value and where the value came from
//   -t  topology of this host as tccl sees it
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "config/params.h"
#include "device/device_comm.h"
#include "exec/waiter.h"
#include "kernels/host/reduce.h"
#include "tccl/tccl.h"
#include "topology/cache_size.h"
#include "topology/host_id.h"

using namespace tccl;

static void PrintVersion() {
  int v = 0;
  tcclGetVersion(&v);
  Dl_info info{};
  dladdr(reinterpret_cast<void*>(&tcclGetVersion), &info);
  printf("tccl %d.%d.%d (version code %d)\n", TCCL_MAJOR, TCCL_MINOR, TCCL_PATCH, v);
  printf("library:      %s\n", info.dli_fname ? info.dli_fname : "?");
  printf("features:     %s\n", TCCL_FEATURES);
  printf("kernels:      %s (chosen at run time for this CPU)\n", IsaName(BestIsa()));
  printf("determinism:  %s (TCCL_DETERMINISM)\n", ParamString("DETERMINISM").c_str());
  printf("transports:   shm (same host), tcp (across hosts)\n");
  printf("cuda:         %s\n", DeviceSupportSummary().c_str());
  printf("not built:    UCX, IB verbs (see README feature table)\n");
}

// The table, then (on stderr, with a false return) the first value a communicator would refuse.
static bool PrintParams() {
  printf("%-22s %-12s %-28s %-32s %s\n", "parameter", "value", "source", "accepted", "description");
  for (const ParamValue& p : AllParams())
    printf("TCCL_%-17s %-12s %-28s %-32s %s\n", p.info->name, p.value.empty() ? "\"\"" : p.value.c_str(),
           p.source.c_str(), ParamAccepted(*p.info).c_str(), p.info->description);
  const std::string problem = CheckParamValues();
  if (problem.empty()) return true;
  fprintf(stderr, "tccl-info: %s: communicator creation would fail with tcclInvalidArgument\n", problem.c_str());
  return false;
}

static void PrintTopology() {
  printf("host name:    %s\n", HostName().c_str());
  printf("host id:      %s\n", HostId().c_str());
  printf("usable cores: %d\n", UsableCores());
  printf("online cores: %ld\n", sysconf(_SC_NPROCESSORS_ONLN));
  // The size the cache rules assume (stores past the cache, ring restarts, the all-to-all's CMA
  // path), and where it came from: a VM may report its whole package's cache.
  const size_t llc = LastLevelCacheBytes();
  printf("last-level cache: %zu KiB, from %s; TCCL_CACHE_BYTES sets it\n", llc >> 10, LastLevelCacheSource());
}

int main(int argc, char** argv) {
  if (argc < 2) {
    PrintVersion();
    return 0;
  }
  int status = 0;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "-v")) PrintVersion();
    else if (!strcmp(argv[i], "-c")) status = PrintParams() ? status : 1;
    else if (!strcmp(argv[i], "-t")) PrintTopology();
    else {
      fprintf(stderr, "usage: tccl-info [-v] [-c] [-t]\n");
      return 2;
    }
  }
  return status;
}
