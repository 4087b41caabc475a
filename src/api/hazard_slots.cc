#include "api/hazard_slots.h"

#include <algorithm>
#include <mutex>
#include <vector>

#include "core/asymmetric_fence.h"

namespace tccl {

namespace {
std::mutex g_mu;
// Never destroyed: a thread exiting after the statics' destructors (or a static's destructor
// calling into the library) still finds the list.
std::vector<HazardSlot*>& Slots() {
  static auto* v = new std::vector<HazardSlot*>;
  return *v;
}

struct ListedSlot {
  HazardSlot slot;
  bool listed = false;
  ~ListedSlot() {
    if (!listed) return;
    std::lock_guard<std::mutex> g(g_mu);
    auto& v = Slots();
    v.erase(std::remove(v.begin(), v.end(), &slot), v.end());
  }
};
thread_local ListedSlot t_slot;
}  // namespace

HazardSlot* ThisThreadsSlot() {
  if (!RegisteredForHeavyFences()) return nullptr;
  ListedSlot& s = t_slot;
  if (!s.listed) {
    std::lock_guard<std::mutex> g(g_mu);
    Slots().push_back(&s.slot);
    s.listed = true;
  }
  return &s.slot;
}

bool AnyThreadHolds(const void* p) {
  std::lock_guard<std::mutex> g(g_mu);
  for (const HazardSlot* s : Slots())
    if (s->inUse.load(std::memory_order_acquire) == p) return true;
  return false;
}

}  // namespace tccl
