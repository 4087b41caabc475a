// Time of an all-to-all made of one send/recv group per call (each rank sends a block to every
// other rank and receives one from each), the way expert-parallel layers exchange tokens with
// NCCL. Used to measure whether such groups' messages should start over at their rings' start
// (docs/performance.md, "Rings that start over"): run it with TCCL_SHM_RING_RESTART=0 and without.
// Standalone, not part of the build; against a build of the library in `build/`:
//
//   g++ -O2 -std=c++17 perf/p2p_alltoall_probe.cc -Iinclude -Lbuild -ltccl -Wl,-rpath,$PWD/build \
//       -o /tmp/p2p_alltoall_probe
//   build/tessera-run -n 8 /tmp/p2p_alltoall_probe [bytes per block=131072] [groups=50]
//
// Rank 0 prints the mean time per group after five untimed ones.
#include <tccl/tccl.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  const size_t bytes = argc > 1 ? strtoul(argv[1], nullptr, 10) : 131072;
  const int groups = argc > 2 ? atoi(argv[2]) : 50;
  tcclComm_t comm;
  if (tcclCommInitFromEnv(&comm, nullptr) != tcclSuccess) {
    fprintf(stderr, "p2p_alltoall_probe: run it under tessera-run -n N\n");
    return 1;
  }
  int rank = 0, n = 0;
  tcclCommUserRank(comm, &rank);
  tcclCommCount(comm, &n);
  std::vector<char> send((size_t)n * bytes, (char)rank), recv((size_t)n * bytes);
  auto group = [&] {
    tcclGroupStart();
    for (int p = 0; p < n; ++p) {
      if (p == rank) continue;
      tcclSend(send.data() + (size_t)p * bytes, bytes, tcclUint8, p, comm, nullptr);
      tcclRecv(recv.data() + (size_t)p * bytes, bytes, tcclUint8, p, comm, nullptr);
    }
    return tcclGroupEnd();
  };
  for (int i = 0; i < 5; ++i) group();
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < groups; ++i)
    if (group() != tcclSuccess) {
      fprintf(stderr, "p2p_alltoall_probe: group failed: %s\n", tcclGetLastError(comm));
      return 1;
    }
  const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / groups;
  for (int p = 0; p < n; ++p)
    if (p != rank && recv[(size_t)p * bytes] != (char)p) {
      fprintf(stderr, "p2p_alltoall_probe: rank %d got the wrong block from %d\n", rank, p);
      return 1;
    }
  if (rank == 0) printf("%d ranks, blocks of %zu B: %.1f us per group\n", n, bytes, us);
  tcclCommDestroy(comm);
  return 0;
}
