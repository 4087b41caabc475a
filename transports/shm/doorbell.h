// A doorbell lets a rank sleep until any local peer makes progress on one of its channels.
// It lives in shared memory; waking uses a process-shared futex, so sleeping costs no CPU and a
// wake costs one atomic add plus a syscall only when someone actually sleeps.
#pragma once

#include <atomic>
#include <cstdint>

namespace tccl {

struct alignas(64) Doorbell {
  std::atomic<uint32_t> seq{0};
  std::atomic<uint32_t> sleepers{0};

  void Ring();
  uint32_t Snapshot() const { return seq.load(std::memory_order_seq_cst); }
  // Sleeps until Ring() is called after `snapshot` was taken, or `timeoutUs` passes.
  void Wait(uint32_t snapshot, int timeoutUs);
};

}  // namespace tccl
