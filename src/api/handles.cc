#include "api/handles.h"

#include <map>
#include <mutex>
#include <set>

namespace tccl {

namespace {
std::mutex g_mu;
std::map<tcclComm_t, std::shared_ptr<Communicator>>& Comms() {
  static std::map<tcclComm_t, std::shared_ptr<Communicator>> m;
  return m;
}
std::set<const void*>& Streams() {
  static std::set<const void*> s;
  return s;
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
  }
  delete c;
  return out;
}

Status AcquireComm(tcclComm_t c, const char* fn, std::shared_ptr<Communicator>* out) {
  if (!c) return InvalidArgument("%s: comm is NULL", fn);
  std::lock_guard<std::mutex> g(g_mu);
  auto it = Comms().find(c);
  if (it == Comms().end())
    return InvalidArgument("%s: comm %p is not a live communicator (already destroyed or aborted?)", fn, (void*)c);
  *out = it->second;
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
