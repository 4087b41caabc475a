#include "memory/registrations.h"

namespace tccl {

Status Registrations::Add(void* buff, size_t size, void** handle) {
  if (!handle) return InvalidArgument("tcclCommRegister: handle is NULL");
  *handle = nullptr;
  if (!buff) return InvalidArgument("tcclCommRegister: buff is NULL");
  if (size == 0) return InvalidArgument("tcclCommRegister: size is 0");
  if ((uintptr_t)buff > UINTPTR_MAX - size) return InvalidArgument("tcclCommRegister: buff + size overflows");
  std::lock_guard<std::mutex> g(mu_);
  const uint64_t h = next_++;
  byHandle_[h] = Range{(uintptr_t)buff, size};
  *handle = reinterpret_cast<void*>((uintptr_t)h);
  return Status::Ok();
}

Status Registrations::Remove(void* handle) {
  std::lock_guard<std::mutex> g(mu_);
  if (byHandle_.erase((uint64_t)(uintptr_t)handle) == 0)
    return InvalidArgument("tcclCommDeregister: %p is not a registration of this communicator", handle);
  return Status::Ok();
}

bool Registrations::Contains(const void* p, size_t bytes) const {
  const uintptr_t at = (uintptr_t)p;
  std::lock_guard<std::mutex> g(mu_);
  for (const auto& [h, r] : byHandle_)
    if (at >= r.begin && at - r.begin <= r.bytes && bytes <= r.bytes - (at - r.begin)) return true;
  return false;
}

size_t Registrations::Count() const {
  std::lock_guard<std::mutex> g(mu_);
  return byHandle_.size();
}

}  // namespace tccl
