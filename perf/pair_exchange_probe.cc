// The machine model's pair exchange (src/tuning/pair_exchange.h), repeated: how often
// ExchangesByCma's margin holds on this machine. With a slot count, the model's three alternated
// rounds (best of each) through that many staging slots instead, without the confirming rounds:
// how the answer depends on the ring's geometry (docs/single_copy.md, "The exchange measured
// through a ring's slots").
//
//   tccl-pair-exchange-probe [trials=12] [slots: 0 = the model's own measurement]
#include <sched.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "tuning/pair_exchange.h"

int main(int argc, char** argv) {
  const long trials = argc > 1 ? atol(argv[1]) : 12, slots = argc > 2 ? atol(argv[2]) : 0;
  cpu_set_t set;
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) == 0)
    for (int c = 0; c < CPU_SETSIZE && cpus.size() < 2; ++c)
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
  if (cpus.size() < 2 || trials < 1 || slots < 0) {
    fprintf(stderr, "needs two usable cores, trials >= 1 and slots >= 0\n");
    return 1;
  }
  if (slots == 0)
    printf("# the machine model's measurement; GB/s each way\n");
  else
    printf("# 512 KiB blocks in 128 KiB messages, the copies through %ld slots; best of 3 rounds; GB/s each way\n", slots);
  int holds = 0;
  for (long t = 0; t < trials; ++t) {
    tccl::PairExchangeRates r;
    if (slots == 0) {
      r = tccl::MeasurePairExchange(cpus[0], cpus[1]);
    } else {
      for (int round = 0; round < 3; ++round) tccl::MeasurePairExchangeRound(cpus[0], cpus[1], (size_t)slots, &r);
    }
    const bool rule = tccl::CmaBeatsTwoCopies(r.cmaGBps, r.copiesGBps);
    holds += rule;
    printf("copies %6.2f  cma %6.2f  cma/copies %.2f%s\n", r.copiesGBps, r.cmaGBps,
           r.copiesGBps > 0 ? r.cmaGBps / r.copiesGBps : 0.0, rule ? "  (CMA leads by the margin)" : "");
    fflush(stdout);
  }
  printf("# CMA >= %.2fx the copies in %d of %ld trials\n", tccl::kExchangeByCmaMargin, holds, trials);
  return 0;
}
