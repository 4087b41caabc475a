// Time of one send/recv group of K messages from rank 0 to rank 1 (docs/performance.md, "Many
// messages to one peer in one step"): the executor moves only the first unfinished message per
// peer and direction, and how it finds that message decides how a group's cost grows with K.
// Standalone, not part of the build; against a build of the library in `build/`:
//
//   g++ -O2 -std=c++17 perf/p2p_group_probe.cc -Iinclude -Lbuild -ltccl -Wl,-rpath,$PWD/build \
//       -o /tmp/p2p_group_probe
//   build/tessera-run -n 2 /tmp/p2p_group_probe [K=512] [bytes per message=4096] [groups=20]
//
// Rank 1 prints the mean time per group after three untimed ones.
#include <tccl/tccl.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  const int K = argc > 1 ? atoi(argv[1]) : 512;
  const size_t bytes = argc > 2 ? strtoul(argv[2], nullptr, 10) : 4096;
  const int groups = argc > 3 ? atoi(argv[3]) : 20;
  tcclComm_t comm;
  if (tcclCommInitFromEnv(&comm, nullptr) != tcclSuccess) {
    fprintf(stderr, "p2p_group_probe: run it under tessera-run -n 2\n");
    return 1;
  }
  int rank = 0, nranks = 0;
  tcclCommUserRank(comm, &rank);
  tcclCommCount(comm, &nranks);
  if (nranks != 2) {
    fprintf(stderr, "p2p_group_probe: needs exactly 2 ranks\n");
    return 1;
  }
  std::vector<char> buf((size_t)K * bytes, 1);
  auto group = [&] {
    tcclGroupStart();
    for (int k = 0; k < K; ++k) {
      char* at = buf.data() + (size_t)k * bytes;
      if (rank == 0) tcclSend(at, bytes, tcclUint8, 1, comm, nullptr);
      else tcclRecv(at, bytes, tcclUint8, 0, comm, nullptr);
    }
    return tcclGroupEnd();
  };
  for (int i = 0; i < 3; ++i) group();
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < groups; ++i)
    if (group() != tcclSuccess) {
      fprintf(stderr, "p2p_group_probe: group failed: %s\n", tcclGetLastError(comm));
      return 1;
    }
  const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / groups;
  if (rank == 1) printf("K=%d messages of %zu B: %.1f us per group\n", K, bytes, us);
  tcclCommDestroy(comm);
  return 0;
}
