// One broadcast at a time: how long an isolated call takes to reach its last receiver, as against
// tessera-perf's stream of back-to-back calls (whose calls overlap). Used to choose what the cost
// model prices where ranks share cores (docs/performance.md, "A stream of broadcasts or one").
//
//   tessera-run -n N build/perf/tccl-broadcast-latency-probe BYTES GAP_US CALLS
//
// The root sleeps GAP_US before each call, so the others are waiting inside tcclBroadcast when it
// starts (spinning, yielding or asleep, as a gap of that length leaves them); it writes
// CLOCK_MONOTONIC (one clock for every process of the host) into the message's first 8 bytes, and
// every rank takes now minus that stamp when its call returns. A call's latency is its slowest
// rank's; the root prints their median, 10th and 90th percentiles in microseconds. TCCL_ALGO forces
// an algorithm.
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <tccl/tccl.h>

namespace {

double NowUs() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

bool Check(tcclResult_t r, tcclComm_t comm, const char* what) {
  if (r == tcclSuccess) return true;
  fprintf(stderr, "%s: %s (%s)\n", what, tcclGetErrorString(r), tcclGetLastError(comm));
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s BYTES GAP_US CALLS (under tessera-run)\n", argv[0]);
    return 2;
  }
  const size_t bytes = std::max<size_t>(8, strtoull(argv[1], nullptr, 10) / 8 * 8);
  const int gapUs = atoi(argv[2]), calls = atoi(argv[3]);
  if (calls < 1 || gapUs < 0) return 2;
  tcclComm_t comm;
  if (!Check(tcclCommInitFromEnv(&comm, nullptr), nullptr, "init")) return 1;
  int rank = 0, nranks = 1;
  tcclCommUserRank(comm, &rank);
  tcclCommCount(comm, &nranks);
  std::vector<double> buf(bytes / 8), latency(calls, 0.0);
  const int warmup = 20;
  for (int i = -warmup; i < calls; ++i) {
    if (rank == 0) {
      usleep(gapUs);
      buf[0] = NowUs();
    }
    if (!Check(tcclBroadcast(buf.data(), buf.data(), bytes / 8, tcclFloat64, 0, comm, nullptr), comm, "broadcast"))
      return 1;
    if (i >= 0) latency[i] = NowUs() - buf[0];
  }
  // Each call's slowest rank.
  if (!Check(tcclAllReduce(latency.data(), latency.data(), calls, tcclFloat64, tcclMax, comm, nullptr), comm,
             "all-reduce"))
    return 1;
  if (rank == 0) {
    std::sort(latency.begin(), latency.end());
    const char* algo = getenv("TCCL_ALGO");
    printf("%d ranks, %zu B, gap %d us, %d calls, TCCL_ALGO=%s: latency us median %.2f p10 %.2f p90 %.2f\n", nranks,
           bytes, gapUs, calls, algo ? algo : "(auto)", latency[calls / 2], latency[calls / 10],
           latency[calls * 9 / 10]);
  }
  tcclCommDestroy(comm);
  return 0;
}
