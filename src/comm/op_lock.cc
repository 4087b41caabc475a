#include "comm/op_lock.h"

#include <sched.h>
#include <time.h>

namespace tccl {

void OpLock::WaitWhileHeld() const {
  // Yields hand the core to the holder at once when ranks outnumber cores; an operation that
  // lasts longer (a large collective, a split's bootstrap exchange) is waited for in sleeps.
  for (int pass = 0; held_.load(std::memory_order_relaxed); ++pass) {
    if (pass < 64) {
      sched_yield();
    } else {
      timespec ts{0, 50 * 1000};
      nanosleep(&ts, nullptr);
    }
  }
}

}  // namespace tccl
