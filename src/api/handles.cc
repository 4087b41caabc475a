#include "api/handles.h"

#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <vector>

#include "core/asymmetric_fence.h"
#include "core/log.h"

namespace tccl {

namespace {
std::mutex g_mu;
// Bumped (under g_mu) whenever a handle leaves the table, so a thread's cached lookup of a handle is
// known to be current without taking g_mu: an uncontended lock and unlock were two of the eight
// locked instructions of an 8-byte collective's software path.
std::atomic<uint64_t> g_epoch{0};
struct LookupCache {
  tcclComm_t handle = nullptr;
  uint64_t epoch = 0;
  Communicator* raw = nullptr;  // the handle's communicator, published in `slot` for each call
  HazardSlot* slot = nullptr;   // this thread's; null where the process has no heavy fences
  std::weak_ptr<Communicator> comm;  // without a slot; weak: never keeps a destroyed communicator alive
};
thread_local LookupCache t_lookup;
// The tables are never destroyed. Built at the first communicator or stream, they would be
// destroyed at exit before any static object built earlier (before main), and such an object's
// destructor calling tcclCommDestroy or tcclStreamDestroy then read a freed table (a double free
// aborted the process; ctest `comm_destroyed_after_main`). A communicator never destroyed is
// left to the process's end, as NCCL leaves it.
std::map<tcclComm_t, std::shared_ptr<Communicator>>& Comms() {
  static auto* m = new std::map<tcclComm_t, std::shared_ptr<Communicator>>;
  return *m;
}
std::set<const void*>& Streams() {
  static auto* s = new std::set<const void*>;
  return *s;
}
// Destroyed communicators a call on another thread still held (its hazard slot) when the handle
// went: the last such call to return frees them (CommRef::Release). Under g_mu; g_retired is their
// number, read by every returning call without the lock.
std::vector<std::shared_ptr<Communicator>>& Retired() {
  static auto* v = new std::vector<std::shared_ptr<Communicator>>;
  return *v;
}
std::atomic<size_t> g_retired{0};

// Under g_mu: moves out the retired communicators no slot holds, for the caller to release after
// unlocking (a communicator's destructor may take locks of its own). No heavy fence is needed
// here: UnregisterComm ran one after unpublishing each, and since then slots only let go of them.
std::vector<std::shared_ptr<Communicator>> TakeUnheldLocked() {
  std::vector<std::shared_ptr<Communicator>> out;
  auto& r = Retired();
  for (auto it = r.begin(); it != r.end();) {
    if (AnyThreadHolds(it->get())) {
      ++it;
    } else {
      out.push_back(std::move(*it));
      it = r.erase(it);
    }
  }
  g_retired.store(r.size(), std::memory_order_relaxed);
  return out;
}
}  // namespace

void CommRef::Release() {
  if (!slot_) return;  // owned_ (if any) goes with this object
  slot_->inUse.store(nullptr, std::memory_order_release);
  std::atomic_signal_fence(std::memory_order_seq_cst);  // UnregisterComm's heavy fence pairs with this
  if (g_retired.load(std::memory_order_relaxed) == 0) return;
  std::vector<std::shared_ptr<Communicator>> freed;
  std::lock_guard<std::mutex> g(g_mu);
  freed = TakeUnheldLocked();
  // `freed` is released after the lock (declared before the guard, destroyed after it).
}

tcclComm_t RegisterComm(std::shared_ptr<Communicator> c) {
  tcclComm_t h = new tcclComm{0};
  std::lock_guard<std::mutex> g(g_mu);
  Comms()[h] = std::move(c);
  return h;
}

std::shared_ptr<Communicator> UnregisterComm(tcclComm_t c) {
  std::shared_ptr<Communicator> out;
  std::vector<std::shared_ptr<Communicator>> freed;  // released after the lock, as in Release
  {
    std::lock_guard<std::mutex> g(g_mu);
    auto it = Comms().find(c);
    if (it == Comms().end()) return nullptr;
    out = std::move(it->second);
    Comms().erase(it);
    g_epoch.fetch_add(1, std::memory_order_release);
    if (RegisteredForHeavyFences()) {
      // Calls may hold it in their slots (AcquireComm's fast path). After the fence, a call that
      // published it before seeing the new epoch shows in its slot; one that had not yet sees the
      // new epoch and lets go. Until no slot holds it, Retired() keeps a reference.
      Retired().push_back(out);
      g_retired.store(Retired().size(), std::memory_order_relaxed);
      if (HeavyFence()) {
        freed = TakeUnheldLocked();  // `out` itself is the reference returned
      } else {
        // Never expected after registering. Without the fence a slot may not show yet: keep the
        // communicator for the process's life rather than free it under a call.
        static auto* kept = new std::vector<std::shared_ptr<Communicator>>;
        kept->push_back(out);
        TCCL_WARN(kLogInit, "membarrier refused after registering: a destroyed communicator is kept until exit");
        std::vector<std::shared_ptr<Communicator>> others = TakeUnheldLocked();
        for (auto& o : others) kept->push_back(std::move(o));
      }
    }
  }
  delete c;
  return out;
}

Status AcquireComm(tcclComm_t c, const char* fn, CommRef* out) {
  if (!c) return InvalidArgument("%s: comm is NULL", fn);
  LookupCache& cache = t_lookup;
  if (cache.handle == c) {
    if (cache.slot && !cache.slot->inUse.load(std::memory_order_relaxed)) {  // (a nested call takes the slow path)
      cache.slot->inUse.store(cache.raw, std::memory_order_relaxed);
      std::atomic_signal_fence(std::memory_order_seq_cst);  // UnregisterComm's heavy fence pairs with this
      if (cache.epoch == g_epoch.load(std::memory_order_relaxed)) {
        out->raw_ = cache.raw;
        out->slot_ = cache.slot;
        return Status::Ok();
      }
      cache.slot->inUse.store(nullptr, std::memory_order_relaxed);
    } else if (!cache.slot && cache.epoch == g_epoch.load(std::memory_order_acquire)) {
      out->owned_ = cache.comm.lock();  // empty only if it was destroyed since: then the table says so below
      if (out->owned_) {
        out->raw_ = out->owned_.get();
        return Status::Ok();
      }
    }
  }
  HazardSlot* slot = ThisThreadsSlot();  // lists the slot on this thread's first call (its own lock)
  std::vector<std::shared_ptr<Communicator>> freed;  // released after the lock
  std::lock_guard<std::mutex> g(g_mu);
  // A fast path above that published a stale pointer and let go may have kept a destroyed
  // communicator retired (its slot matched): free what no slot holds now, failed lookup or not.
  if (g_retired.load(std::memory_order_relaxed)) freed = TakeUnheldLocked();
  auto it = Comms().find(c);
  if (it == Comms().end())
    return InvalidArgument("%s: comm %p is not a live communicator (already destroyed or aborted?)", fn, (void*)c);
  out->raw_ = it->second.get();
  if (slot && !slot->inUse.load(std::memory_order_relaxed)) {
    // Published under g_mu, which UnregisterComm takes before it looks at slots.
    slot->inUse.store(out->raw_, std::memory_order_relaxed);
    out->slot_ = slot;
  } else {
    out->owned_ = it->second;
  }
  cache.handle = c;
  cache.epoch = g_epoch.load(std::memory_order_relaxed);
  cache.raw = out->raw_;
  cache.slot = slot;
  cache.comm = it->second;
  return Status::Ok();
}

HostStream* NewStream() {
  auto* s = new HostStream();
  std::lock_guard<std::mutex> g(g_mu);
  Streams().insert(s);
  return s;
}

Status DeleteStream(void* s) {
  {
    std::lock_guard<std::mutex> g(g_mu);
    if (!s || !Streams().erase(s)) return InvalidArgument("tcclStreamDestroy: %p is not a live host stream", s);
  }
  delete static_cast<HostStream*>(s);
  return Status::Ok();
}

Status CheckStream(void* s, const char* fn, HostStream** out) {
  *out = nullptr;
  if (!s) return Status::Ok();
  std::lock_guard<std::mutex> g(g_mu);
  if (!Streams().count(s))
    return InvalidArgument("%s: stream %p is not a host stream made by tcclStreamCreate (a host communicator "
                           "takes NULL or a tccl host stream)",
                           fn, s);
  *out = static_cast<HostStream*>(s);
  return Status::Ok();
}

}  // namespace tccl
