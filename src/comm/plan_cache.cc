#include "comm/plan_cache.h"

namespace tccl {

static bool SameCall(const CollArgs& x, const CollArgs& y) {
  return x.kind == y.kind && x.count == y.count && x.elemSize == y.elemSize && x.op == y.op && x.root == y.root &&
         x.inPlace == y.inPlace && x.sliceElems == y.sliceElems && x.requireCanonical == y.requireCanonical &&
         x.singleCopyBytes == y.singleCopyBytes &&
         x.rank == y.rank && x.nranks == y.nranks;
}

const Plan* PlanCache::Find(const CollArgs& a, tcclDataType_t dt) const {
  for (const Entry& e : entries_)
    if (e.dt == dt && SameCall(e.args, a)) return &e.plan;
  return nullptr;
}

const Plan* PlanCache::Add(const CollArgs& a, tcclDataType_t dt, Plan plan) {
  Entry e{a, dt, std::move(plan)};
  if (entries_.size() < kEntries) {
    entries_.reserve(kEntries);  // returned pointers stay valid until their slot is reused
    entries_.push_back(std::move(e));
    return &entries_.back().plan;
  }
  Entry& slot = entries_[next_];
  next_ = (next_ + 1) % kEntries;
  slot = std::move(e);
  return &slot.plan;
}

}  // namespace tccl
