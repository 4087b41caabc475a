#include "comm/all_to_all_by_cma.h"

#include <algorithm>

namespace tccl {

// The direct all-to-all keeps every directed pair's ring busy at once: L * (L - 1) rings.
static bool PairRingsOutgrowTheCache(size_t localRanks, size_t ringBytes, size_t cacheBytes) {
  return cacheBytes > 0 && localRanks > 1 && localRanks * (localRanks - 1) * ringBytes > cacheBytes;
}

bool AllToAllByCma(size_t localRanks, bool ranksShareCores, size_t ringBytes, size_t cacheBytes) {
  return ranksShareCores && PairRingsOutgrowTheCache(localRanks, ringBytes, cacheBytes);
}

size_t AllToAllSingleCopyFrom(size_t singleCopyBytes, size_t localRanks, size_t ringBytes, size_t cacheBytes) {
  if (singleCopyBytes == 0 || !PairRingsOutgrowTheCache(localRanks, ringBytes, cacheBytes)) return singleCopyBytes;
  return std::min(singleCopyBytes, kAllToAllSingleCopyBytes);
}

bool AllToAllScratchByCma(size_t localRanks, size_t blockBytes, size_t cacheBytes) {
  return PairRingsOutgrowTheCache(localRanks, blockBytes, cacheBytes);  // the same count: one per directed pair
}

}  // namespace tccl
