#include "comm/plan_cache.h"

namespace tccl {

static bool SameCall(const CollArgs& x, const CollArgs& y) {
  return x.kind == y.kind && x.count == y.count && x.elemSize == y.elemSize && x.op == y.op && x.root == y.root &&
         x.inPlace == y.inPlace && x.sliceElems == y.sliceElems && x.requireCanonical == y.requireCanonical &&
         x.singleCopyBytes == y.singleCopyBytes && x.singleCopyByCma == y.singleCopyByCma &&
         x.rank == y.rank && x.nranks == y.nranks;
}

const Plan* PlanCache::Find(const CollArgs& a, tcclDataType_t dt) const {
  // A loop repeats its last call most often: that entry first, then the rest.
  if (lastHit_ < entries_.size() && entries_[lastHit_].dt == dt && SameCall(entries_[lastHit_].args, a))
    return &entries_[lastHit_].plan;
  for (size_t i = 0; i < entries_.size(); ++i)
    if (entries_[i].dt == dt && SameCall(entries_[i].args, a)) {
      lastHit_ = i;
      return &entries_[i].plan;
    }
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
