#include "comm/exchanges_by_cma.h"

namespace tccl {

bool ExchangesByCma(const MachineModel& m, size_t localRanks) {
  const size_t cores = (size_t)m.cores;  // the pair exchange is measured only with two or more
  const bool measuredShape = cores >= 2 && (localRanks == 2 || localRanks > cores);
  return measuredShape && CmaBeatsTwoCopies(m.exchangeCmaGBps, m.exchangeCopiesGBps);
}

bool BroadcastByCma(bool exchangesByCma, size_t localRanks, size_t bytes, size_t cacheBytes) {
  return exchangesByCma && localRanks == 2 && bytes >= kSingleCopyBytesWhereBroadcastGoesByCma &&
         bytes <= cacheBytes / 2;
}

}  // namespace tccl
