#include "core/asymmetric_fence.h"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace tccl {

namespace {
long Membarrier(int cmd) { return syscall(__NR_membarrier, cmd, 0, 0); }

bool Register() {
  const long offered = Membarrier(MEMBARRIER_CMD_QUERY);
  if (offered < 0 || !(offered & MEMBARRIER_CMD_GLOBAL_EXPEDITED) ||
      !(offered & MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED))
    return false;
  return Membarrier(MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) == 0;
}
}  // namespace

namespace fence_detail {
std::atomic<bool> registered{false};

bool RegisterOnce() {
  static const bool ok = Register();  // thread-safe once: the first communicator's setup
  if (ok) registered.store(true, std::memory_order_relaxed);
  return ok;
}
}  // namespace fence_detail

bool HeavyFence() { return Membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED) == 0; }

}  // namespace tccl
