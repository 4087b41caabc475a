// How fast two cores exchange blocks, the two ways ranks of one host can move a plain (malloc'd)
// buffer between processes: through shared staging slots (the sender copies in, the receiver
// copies out: the rings' two copies) or read by the receiver straight from the sender's memory
// with CMA (process_vm_readv, one copy). Measured with two threads of this process pinned to two
// cores, each sending its own block to the other and receiving the other's at the same time, as
// in a 2-rank all-gather or all-to-all: with two copies each core copies every byte twice (its
// own block in, the peer's out), with CMA once, but a CMA read pays a system call and its page
// pinning per message. Which wins depends on the machine (docs/single_copy.md, "Exchanges by CMA
// where the machine model measures it faster", and "The exchange measured through a ring's
// slots"): on a Zen 4 EPYC VM the two copies won by 1.1-1.7x; on a Xeon VM CMA was ~2x faster
// (through two slots, as the measurement then was).
#pragma once

#include <cstddef>

namespace tccl {

enum class ExchangeBy { TwoCopies, Cma };

// GB/s each way of two threads on cpuA and cpuB each exchanging `blockBytes` in messages of
// `messageBytes`, the two copies through a ring of `stagingSlots` messages (ignored by CMA); best
// of `reps`. 0 where it cannot be measured (CMA refused, no memory, no slot).
double MeasurePairExchangeGBps(ExchangeBy how, int cpuA, int cpuB, size_t blockBytes, size_t messageBytes,
                               size_t stagingSlots, int reps);

// CMA must beat the two copies by this factor: the measurement is a best of alternated rounds of
// two threads, while ranks are processes whose CMA reads also take the kernel's mm locks; a rate
// within this margin is not a reason to change paths. (On the Xeon VM that showed the gain the
// model measured ~2x, through two staging slots. On a Zen 4 EPYC VM, where the collectives ran
// faster through the rings, CMA measured 1.23-1.35x through two slots and 0.6-0.8x through the
// eight the model now uses; the Xeon has not been measured through eight.)
constexpr double kExchangeByCmaMargin = 1.25;
inline bool CmaBeatsTwoCopies(double cmaGBps, double copiesGBps) {
  return copiesGBps > 0 && cmaGBps >= kExchangeByCmaMargin * copiesGBps;
}

struct PairExchangeRates {
  double copiesGBps = 0, cmaGBps = 0;
};

// One round of the model's measurement below through `stagingSlots` slots: the two copies, then
// CMA, each rate kept in *best where it beats what is there.
void MeasurePairExchangeRound(int cpuA, int cpuB, size_t stagingSlots, PairExchangeRates* best);

// The machine model's measurement (its exchange_copies_gbps and exchange_cma_gbps): 512 KiB
// blocks in the shared-memory transport's default geometry, 128 KiB messages (the slice,
// TCCL_CHUNK_BYTES) through a ring of eight (TCCL_SHM_RING_BYTES' 1 MiB), so a slot is rewritten
// only eight messages after the peer read it, as in the rings; three rounds alternating the two
// ways, best of each. Where CMA then leads by the margin, ten more rounds 100 ms apart confirm it
// (docs/single_copy.md, "The exchange measured through a ring's slots").
PairExchangeRates MeasurePairExchange(int cpuA, int cpuB);

}  // namespace tccl
