#include "api/handles.h"

#include <atomic>
#include <map>
#include <mutex>
#include <set>

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
  std::weak_ptr<Communicator> comm;  // weak: the cache never keeps a destroyed communicator alive
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
}  // namespace

tcclComm_t RegisterComm(std::shared_ptr<Communicator> c) {
  tcclComm_t h = new tcclComm{0};
  std::lock_guard<std::mutex> g(g_mu);
  Comms()[h] = std::move(c);
  return h;
}

std::shared_ptr<Communicator> UnregisterComm(tcclComm_t c) {
  std::shared_ptr<Communicator> out;
  {
    std::lock_guard<std::mutex> g(g_mu);
    auto it = Comms().find(c);
    if (it == Comms().end()) return nullptr;
    out = std::move(it->second);
    Comms().erase(it);
    g_epoch.fetch_add(1, std::memory_order_release);
  }
  delete c;
  return out;
}

Status AcquireComm(tcclComm_t c, const char* fn, std::shared_ptr<Communicator>* out) {
  if (!c) return InvalidArgument("%s: comm is NULL", fn);
  LookupCache& cache = t_lookup;
  if (cache.handle == c && cache.epoch == g_epoch.load(std::memory_order_acquire)) {
    *out = cache.comm.lock();  // empty only if it was destroyed since: then the table says so below
    if (*out) return Status::Ok();
  }
  std::lock_guard<std::mutex> g(g_mu);
  auto it = Comms().find(c);
  if (it == Comms().end())
    return InvalidArgument("%s: comm %p is not a live communicator (already destroyed or aborted?)", fn, (void*)c);
  *out = it->second;
  cache.handle = c;
  cache.epoch = g_epoch.load(std::memory_order_relaxed);
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
