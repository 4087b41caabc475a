#include "comm/exchanges_by_cma.h"

namespace tccl {

bool ExchangesByCma(const MachineModel& m, size_t localRanks) {
  return localRanks == 2 && localRanks <= (size_t)m.cores && m.exchangeCopiesGBps > 0 &&
         m.exchangeCmaGBps >= kExchangeByCmaMargin * m.exchangeCopiesGBps;
}

bool BroadcastByCma(bool exchangesByCma, size_t bytes, size_t cacheBytes) {
  return exchangesByCma && bytes >= kSingleCopyBytesWhereBroadcastGoesByCma && bytes <= cacheBytes / 2;
}

}  // namespace tccl
