// Per-thread hazard slots: each thread publishes the object its current call uses, so the object
// can be kept alive for the call without a reference count. Taking and dropping a shared_ptr costs
// two locked instructions per call (a weak_ptr's lock is a compare-and-swap loop, the release an
// atomic add): 13 ns of an 85 ns 8-byte broadcast's software path on the development VM
// (docs/performance.md, "Calls without reference counts").
//
// The protocol is a Dekker handshake made asymmetric (src/core/asymmetric_fence.h):
//   a caller:   slot = p;  (compiler barrier)  check p is still published (its own test)
//   a retirer:  unpublish p;  HeavyFence();  AnyThreadHolds(p)?
// The heavy fence orders every running thread's slot store before its later loads, so either the
// caller's check sees p unpublished (and it clears its slot and takes its slow path) or the
// retirer sees the slot (and keeps p until the slot clears). Clearing a slot is a release store,
// read with acquire by AnyThreadHolds: the caller's uses of p happen before the retirer frees it.
// Where the kernel refuses heavy fences, ThisThreadsSlot() is null and callers hold references.
#pragma once

#include <atomic>

namespace tccl {

struct HazardSlot {
  std::atomic<const void*> inUse{nullptr};
};

// This thread's slot: listed on first use, unlisted when the thread exits. Null where this
// process is not registered for heavy fences.
HazardSlot* ThisThreadsSlot();

// Whether any thread's slot now holds p. Meaningful after a heavy fence that followed the store
// unpublishing p: run HeavyFence() first (false from it: treat every p as held).
bool AnyThreadHolds(const void* p);

}  // namespace tccl
