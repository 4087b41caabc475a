#include "comm/registered_by_cma.h"

#include <atomic>

namespace tccl {

namespace {
std::atomic<bool> g_offerForTests{false};
}  // namespace

bool OfferRegisteredByCma() { return g_offerForTests.load(std::memory_order_relaxed); }

void OfferRegisteredForTests(bool on) { g_offerForTests.store(on, std::memory_order_relaxed); }

}  // namespace tccl
