// One operation at a time per communicator (its connections are ordered streams).
//
// Uncontended, which is the normal case (one thread drives a communicator, as NCCL requires), it
// costs one locked instruction to enter and a plain store to leave; std::mutex costs two locked
// instructions, and locked instructions were a measurable part of an 8-byte collective's software
// path (docs/performance.md). A second thread (a host stream's worker and the caller on the same
// communicator, or a split) waits by yielding and then sleeping 50 us at a time: that path only
// has to be correct, not fast.
#pragma once

#include <atomic>

namespace tccl {

class OpLock {
 public:
  void lock() {
    while (held_.exchange(true, std::memory_order_acquire)) WaitWhileHeld();
  }
  void unlock() { held_.store(false, std::memory_order_release); }

 private:
  void WaitWhileHeld() const;
  std::atomic<bool> held_{false};
};

}  // namespace tccl
