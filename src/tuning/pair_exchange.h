// How fast two cores exchange blocks, the two ways ranks of one host can move a plain (malloc'd)
// buffer between processes: through shared staging slots (the sender copies in, the receiver
// copies out: the rings' two copies) or read by the receiver straight from the sender's memory
// with CMA (process_vm_readv, one copy). Measured with two threads of this process pinned to two
// cores, each sending its own block to the other and receiving the other's at the same time, as
// in a 2-rank all-gather or all-to-all: with two copies each core copies every byte twice (its
// own block in, the peer's out), with CMA once, but a CMA read pays a system call and its page
// pinning per message. Which wins depends on the machine (docs/single_copy.md, "Exchanges by CMA
// where the machine model measures it faster"): on the AMD EPYC development VMs the two copies
// ran in cache and won; on a Xeon VM CMA was ~2x faster.
#pragma once

#include <cstddef>

namespace tccl {

enum class ExchangeBy { TwoCopies, Cma };

// GB/s each way of two threads on cpuA and cpuB each exchanging `blockBytes` in messages of
// `messageBytes`, the two copies through a ring of `stagingSlots` messages (ignored by CMA); best
// of `reps`. 0 where it cannot be measured (CMA refused, no memory, no slot).
double MeasurePairExchangeGBps(ExchangeBy how, int cpuA, int cpuB, size_t blockBytes, size_t messageBytes,
                               size_t stagingSlots, int reps);

}  // namespace tccl
