#include "comm/registered_by_cma.h"

#include <atomic>

namespace tccl {

namespace {
std::atomic<bool> g_reductionsForTests{false};
}  // namespace

bool OfferRegisteredByCma(CollKind kind) {
  if (g_reductionsForTests.load(std::memory_order_relaxed)) return true;
  return kind != CollKind::AllReduce && kind != CollKind::ReduceScatter && kind != CollKind::Reduce;
}

void OfferRegisteredToReductionsForTests(bool on) { g_reductionsForTests.store(on, std::memory_order_relaxed); }

}  // namespace tccl
