// User buffers registered with a communicator (tcclCommRegister). A registered buffer's large
// messages to same-host peers in other processes are read by the receiver directly from this
// process's memory with process_vm_readv (CMA, one copy) instead of through the channel ring (two
// copies). Registration is local (no peer is involved), as in NCCL.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>

#include "core/status.h"

namespace tccl {

class Registrations {
 public:
  Status Add(void* buff, size_t size, void** handle);
  Status Remove(void* handle);
  bool Contains(const void* p, size_t bytes) const;
  size_t Count() const;

 private:
  struct Range {
    uintptr_t begin;
    size_t bytes;
  };
  mutable std::mutex mu_;
  std::map<uint64_t, Range> byHandle_;
  uint64_t next_ = 1;
};

// A registration for one scope (a call that offers its buffer to peers like a registered one);
// nothing when `r` is null or the range is rejected.
class ScopedRegistration {
 public:
  ScopedRegistration(Registrations* r, const void* buff, size_t size) {
    if (r && r->Add(const_cast<void*>(buff), size, &handle_).ok()) r_ = r;
  }
  ~ScopedRegistration() {
    if (r_) r_->Remove(handle_);
  }
  ScopedRegistration(const ScopedRegistration&) = delete;
  ScopedRegistration& operator=(const ScopedRegistration&) = delete;

 private:
  Registrations* r_ = nullptr;
  void* handle_ = nullptr;
};

}  // namespace tccl
