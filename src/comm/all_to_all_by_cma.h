// How an all-to-all moves its blocks between the ranks of one host: through the shared-memory
// rings, or read by the receiver with CMA straight from the sender's buffer (single_copy.h). The
// rules, kept apart from the communicator that applies them (RunCollective), with their measurements.
#pragma once

#include <cstddef>

namespace tccl {

// Whether an all-to-all's large blocks should be read by CMA rather than pass through the rings
// (Communicator::RunCollective offers the send buffer for the call). The direct all-to-all keeps
// every directed pair's ring busy at once: L * (L - 1) rings of `ringBytes`. While they fit in the
// last-level cache, each block's two copies (into the ring, out of it) run at cache speed and beat
// one CMA read (9-12 GB/s on the development VM); once they do not, the ring traffic goes to
// memory too. Measured on 2 cores, 32 MiB L3, 1 MiB rings (docs/single_copy.md, "All-to-all by
// CMA"): 8 ranks (56 MiB of rings) 1.06-1.4x faster by CMA from 4 MiB; 3 to 6 ranks (6-30 MiB)
// up to 25% slower. Only where ranks share cores: the only case measured. There the host's
// single-copy threshold is 128 KiB too (HostSingleCopyBytes, transports/shm/shm_transport.h), so
// blocks from that size are read by CMA.
bool AllToAllByCma(size_t localRanks, bool ranksShareCores, size_t ringBytes, size_t cacheBytes);

// Whether an in-place all-to-all (where AllToAllByCma holds) also offers the scratch it sets its
// blocks aside in: where the blocks the host's ranks set aside, L * (L - 1) of `blockBytes`,
// outgrow the last-level cache. The scratch is written by the call itself; while it fits in the
// cache, a peer's CMA read finds its lines dirty in the writer's cache, which in the VM's slow
// state cost more than the rings (8 ranks, 128-512 KiB blocks: 1.2-1.8x slower, though 1.2-1.6x
// faster in the fast state); past it the reads find them in memory (8 ranks, 2-8 MiB blocks:
// 1.09-1.37x faster in both states; 7 ranks, 2.3-9 MiB: 1.15-1.4x faster in the fast state, 4-12%
// slower in the slow one). docs/single_copy.md, "In place, from the scratch".
bool AllToAllScratchByCma(size_t localRanks, size_t blockBytes, size_t cacheBytes);

}  // namespace tccl
