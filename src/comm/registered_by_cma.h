// Which collectives offer buffers registered with tcclCommRegister for CMA reads
// (transports/shm/single_copy.h). Kept apart from the communicator that applies it
// (RunCollective), with its measurements, as all_to_all_by_cma.h keeps the all-to-all's rules.
#pragma once

#include "algorithms/schedule.h"

namespace tccl {

// False for the collectives whose receivers reduce what they receive (all-reduce, reduce-scatter,
// reduce): there a CMA read goes through a 256 KiB bounce buffer before the reduction, so the
// receiver makes the kernel's copy (process_vm_readv, 9-12 GB/s on the development VM) and then
// reduces, where through the rings the sender's core makes one of the two copies. Measured on
// 2 cores with registered buffers (`tessera-perf -R 2`) against plain ones (`-R 0`), 256 KiB-64 MiB:
// the 2-rank all-reduce 1.5-2.5x slower (the model, pricing a CMA read as free, picked the direct
// all-reduce; the two-shot, forced, was still 10-20% slower), the 2-rank reduce 2-3x and the
// 4-rank reduce 1.4-2.5x slower (docs/single_copy.md, "Registered buffers in reductions"). Their
// messages then go through the rings and the cost model does not count those buffers as read in
// one copy (Communicator::SingleCopyBytesFor), so registering changes nothing for them.
// `tcclMemAlloc` buffers (mapped: read like local memory) are offered to every collective.
bool OfferRegisteredByCma(CollKind kind);

// For tests: offer registered buffers to reductions too, so that the CMA read into a reduction
// (through the bounce buffer) stays tested. Set alike on every rank, before the calls' plans are made.
void OfferRegisteredToReductionsForTests(bool on);

}  // namespace tccl
