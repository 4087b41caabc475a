// Ranks as threads of one process (tcclCommInitAll), which tessera-perf does not run: the median
// time of an all-reduce of BYTES (float sum) over CALLS calls, in or out of place. Used to time what
// single copy between threads changes (docs/single_copy.md, "Slices read in one copy").
//
//   build/perf/tccl-thread-ranks-probe RANKS BYTES IN_PLACE(0|1) CALLS
//
// Prints "RANKS BYTES ip|oop MEDIAN_US" (rank 0's calls, after 5 untimed ones). Every rank checks
// its first result (all inputs 1.0: the sum is RANKS); in place the inputs then grow call by call,
// which changes no timing. Two builds compared (alternate the binaries round by round):
//   g++ -O2 -std=c++17 -I<tree>/include perf/thread_ranks_probe.cc -L<tree>/build -ltccl \
//       -Wl,-rpath,<tree>/build -lpthread -o /tmp/probe_<name>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include <tccl/tccl.h>

int main(int argc, char** argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: %s RANKS BYTES IN_PLACE(0|1) CALLS\n", argv[0]);
    return 2;
  }
  const int n = atoi(argv[1]), calls = atoi(argv[4]);
  const size_t count = strtoull(argv[2], nullptr, 10) / sizeof(float);
  const bool inPlace = atoi(argv[3]) != 0;
  if (n < 1 || calls < 1 || count == 0) return 2;
  std::vector<tcclComm_t> comms(n);
  if (tcclCommInitAll(comms.data(), n, nullptr) != tcclSuccess) {
    fprintf(stderr, "tcclCommInitAll failed\n");
    return 1;
  }
  std::vector<std::vector<float>> send(n, std::vector<float>(count, 1.0f)), recv(n, std::vector<float>(count));
  std::vector<double> us(calls);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int k = 0; k < n; ++k)
    threads.emplace_back([&, k] {
      float* out = inPlace ? send[k].data() : recv[k].data();
      for (int i = -5; i < calls; ++i) {
        const auto start = std::chrono::steady_clock::now();
        if (tcclAllReduce(send[k].data(), out, count, tcclFloat32, tcclSum, comms[k], nullptr) != tcclSuccess) {
          failures++;
          return;
        }
        const auto end = std::chrono::steady_clock::now();
        if (i == -5 && (out[0] != (float)n || out[count - 1] != (float)n)) failures++;
        if (k == 0 && i >= 0) us[i] = std::chrono::duration<double, std::micro>(end - start).count();
      }
    });
  for (std::thread& t : threads) t.join();
  for (tcclComm_t c : comms) tcclCommDestroy(c);
  if (failures) {
    fprintf(stderr, "%d calls failed or gave a wrong sum\n", failures.load());
    return 1;
  }
  std::sort(us.begin(), us.end());
  printf("%d %zu %s %.1f\n", n, count * sizeof(float), inPlace ? "ip" : "oop", us[calls / 2]);
  return 0;
}
