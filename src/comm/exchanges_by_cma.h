// Whether the ranks of a host exchange the large blocks of plain buffers by CMA (the receiver reads
// the sender's buffer with process_vm_readv, one copy) rather than through the rings (two copies),
// in the collectives where every rank sends its own untouched block while it receives: the
// all-gather (in and out of place) and the out-of-place all-to-all. The machine model's
// exchange rates decide (tuning/pair_exchange.h): measured on each machine, because the answer
// differs (docs/single_copy.md, "Exchanges by CMA where the machine model measures it faster").
#pragma once

#include <cstddef>

#include "tuning/machine_model.h"
#include "tuning/pair_exchange.h"

namespace tccl {

// Holds where the model's CMA rate beats its two copies by the measurement's margin
// (CmaBeatsTwoCopies, tuning/pair_exchange.h) and localRanks, the communicator's ranks on this
// host, are two (the measurement: a pair exchanging, each on a core of its own), or more ranks
// than the model's cores (measured with ranks at 3-8 on the Xeon VM's two cores: a CMA read needs
// only the receiver on a core, where a ring message needs the sender scheduled to copy it in; 4
// and 8 ranks, 256 KiB all-to-all 51 -> 27 and 206 -> 105 us, all-gather 68 -> 33 and 228 -> 78). Not more than two ranks with a core each: not measured (the
// GPU machines' 16 cores have not been lent since). The model's core count, not one rank's
// affinity: the host's ranks must agree on the answer (it sets the host's single-copy threshold)
// and every rank has the host's first rank's model.
bool ExchangesByCma(const MachineModel& m, size_t localRanks);

// Where exchanges go by CMA, the all-gather's and all-to-all's messages from this size on carry a
// single-copy header (ShmOperation::singleCopyFrom; the host's threshold, 256 KiB by default, stays
// for every other operation). Measured with tccl on the Xeon VM (2 ranks, out of place,
// TCCL_SHM_SINGLE_COPY_BYTES swept; docs/single_copy.md): 16 KiB messages by CMA made a 32 KiB
// all-gather 1.3x faster (3.0 -> 2.3 us), 8 KiB ones were level, 4 KiB ones 10% slower (a system
// call and page pinning per message). Below the rings' 128 KiB slice, so every slice of a larger
// block (the algorithms cut equal slices of more than half of it) qualifies too.
constexpr size_t kSingleCopyBytesWhereExchangesGoByCma = 16 << 10;

// Where exchanges go by CMA and the host runs two ranks, whether a broadcast of `bytes` is read by
// its receiver from the root's buffer with CMA too (the root offers it; its messages carry a
// single-copy header from kSingleCopyBytesWhereBroadcastGoesByCma): from that size up to half the
// machine model's cache (`cacheBytes`, measured). Only one rank copies then, where the rings' two
// copies are pipelined on both cores: that wins while the root's buffer and the receiver's fit in
// the receiver's cache, and loses once they do not. Measured on the Xeon VM (2 ranks, in place,
// 2 MiB measured cache; docs/single_copy.md, "The broadcast"): 64 KiB-1 MiB 1.2-1.7x faster;
// 2-16 MiB 1.3x slower (the chain's slices by CMA; in one message, 2 MiB 1.2x slower). At 4
// ranks on two cores, the direct broadcast by CMA was slower than the chain through the rings
// (256 KiB 33 -> 40 us, 1 MiB 178 -> 252): its root's buffer is read by three ranks sharing the cores.
bool BroadcastByCma(bool exchangesByCma, size_t localRanks, size_t bytes, size_t cacheBytes);

// Below it a broadcast's messages by CMA were slower than the ring's (16 KiB 1.11 -> 1.33 us) and
// at 32 KiB level: a one-way message through the ring is cheaper than the all-gather's exchange,
// where both cores copy at once.
constexpr size_t kSingleCopyBytesWhereBroadcastGoesByCma = 32 << 10;

}  // namespace tccl
