#include "comm/all_to_all_by_cma.h"

#include "transports/shm/shm_transport.h"

namespace tccl {

// The direct all-to-all keeps every directed pair's ring busy at once: L * (L - 1) rings.
bool AllToAllByCma(size_t localRanks, bool ranksShareCores, size_t ringBytes, size_t cacheBytes) {
  return ranksShareCores && PairRingsOutgrowTheCache(localRanks, ringBytes, cacheBytes);
}

bool AllToAllScratchByCma(size_t localRanks, size_t blockBytes, size_t cacheBytes) {
  return PairRingsOutgrowTheCache(localRanks, blockBytes, cacheBytes);  // the same count: one per directed pair
}

}  // namespace tccl
