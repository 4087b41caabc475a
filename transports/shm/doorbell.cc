#include "transports/shm/doorbell.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <climits>

#include "core/asymmetric_fence.h"

namespace tccl {

static long Futex(std::atomic<uint32_t>* addr, int op, uint32_t val, const timespec* ts) {
  // Not FUTEX_PRIVATE: the word is shared between processes.
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(addr), op, val, ts, nullptr, 0);
}

void Doorbell::OfferHeavyFences() {
  ownerFencesForRingers.store(RegisteredForHeavyFences() ? 1 : 0, std::memory_order_relaxed);
}

void Doorbell::Ring() {
  // Orders the caller's data stores before the sleeper check (pairs with Announce): the owner's
  // heavy fence does it where both ends take part, else this fence.
  if (ownerFencesForRingers.load(std::memory_order_relaxed) && RegisteredForHeavyFences())
    std::atomic_signal_fence(std::memory_order_seq_cst);  // the compiler must not move the load up
  else
    std::atomic_thread_fence(std::memory_order_seq_cst);
  if (sleepers.load(std::memory_order_relaxed) == 0) return;
  seq.fetch_add(1, std::memory_order_seq_cst);
  Futex(&seq, FUTEX_WAKE, INT_MAX, nullptr);
}

void Doorbell::RingAlways() {
  seq.fetch_add(1, std::memory_order_seq_cst);
  if (sleepers.load(std::memory_order_seq_cst) != 0) Futex(&seq, FUTEX_WAKE, INT_MAX, nullptr);
}

uint32_t Doorbell::Announce() {
  sleepers.fetch_add(1, std::memory_order_seq_cst);
  // Drains every ringer's stores: after this, a ring that did not see the announcement has its
  // data visible to the check that follows. Should the kernel refuse, ringers fence from now on,
  // and this sleep might miss a ring made before they knew: it ends at its timeout (10 ms).
  if (ownerFencesForRingers.load(std::memory_order_relaxed) && !HeavyFence())
    ownerFencesForRingers.store(0, std::memory_order_seq_cst);
  return seq.load(std::memory_order_seq_cst);
}

void Doorbell::Wait(uint32_t snapshot, int timeoutUs) {
  if (seq.load(std::memory_order_seq_cst) != snapshot) return;
  timespec ts{timeoutUs / 1000000, (long)(timeoutUs % 1000000) * 1000};
  Futex(&seq, FUTEX_WAIT, snapshot, &ts);
}

}  // namespace tccl
