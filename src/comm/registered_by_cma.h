// Whether buffers registered with tcclCommRegister are offered to same-host peers for CMA reads
// (transports/shm/single_copy.h). Kept apart from the communicator that applies it
// (RunCollective, RunP2P), with its measurements, as all_to_all_by_cma.h keeps the all-to-all's.
#pragma once

namespace tccl {

// False: messages from registered buffers go through the rings (with the single-copy header, the
// payload inline), and the cost model prices those buffers as plain ones
// (Communicator::SingleCopyBytesFor), so registering changes neither the algorithm nor the path.
// Measured on the 2-core development VM (docs/single_copy.md, "Registered buffers"), `tessera-perf
// -R 2` (registered) against `-R 0` (plain), 256 KiB-64 MiB, 2, 4 and 8 ranks: CMA was slower in
// every collective and in send/recv, by up to 3.7x (broadcast and all-gather at 4 and 8 ranks
// 1.5-2.3x, 2-rank broadcast 64 MiB 1.6x, the 2-rank reduce 2.2-3.7x, whose CMA reads
// go through a bounce buffer and for which the model, pricing a CMA read as free, picked the
// direct all-reduce and the tree reduce); nowhere clearly faster. A CMA read is the kernel's copy
// with pages pinned per call (9-12 GB/s there, 17-18 for a memcpy from a mapped buffer), and the
// sender waits for it, where through the rings the sender's copy runs beside the receiver's.
// Where CMA did pay, the all-to-all's large blocks where the pairs' rings outgrow the cache, the
// all-to-all offers its own buffers (AllToAllByCma), registered or not. `tcclMemAlloc` buffers
// (mapped: read like local memory) are offered to every collective.
bool OfferRegisteredByCma();

// For tests: offer registered buffers to every collective and to send/recv, so that the CMA
// reads of registered buffers (into a reduction, through the bounce buffer, too) stay tested. Set
// alike on every rank, before the communicator's first call.
void OfferRegisteredForTests(bool on);

}  // namespace tccl
