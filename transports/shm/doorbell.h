// A doorbell lets a rank sleep until any local peer makes progress on one of its channels.
// It lives in shared memory; waking uses a process-shared futex, so sleeping costs no CPU.
//
// Ringing is free while nobody sleeps: a ring that bumped a counter the waiter polls would move
// the waiter's cache line on every message (measured: 14% of an 8-byte all-reduce at 2 ranks).
// So a rank about to sleep first announces itself and then checks its channels once more
// (Dekker-style): a sender stores its data, fences, and rings only if it sees a sleeper. Either the
// sender sees the announcement and wakes the sleeper, or the sleeper's re-check sees the data.
// Where the kernel allows, the sleeper runs the sender's half of that fence too (one
// membarrier(2) per sleep, asymmetric_fence.h), and a ring is a plain load.
#pragma once

#include <atomic>
#include <cstdint>

namespace tccl {

struct alignas(64) Doorbell {
  std::atomic<uint32_t> seq{0};
  std::atomic<uint32_t> sleepers{0};
  // Set by the owner: it runs a heavy fence (asymmetric_fence.h) between announcing and its last
  // check, so a ringer registered for heavy fences need not fence. Cleared if the kernel refuses one.
  std::atomic<uint32_t> ownerFencesForRingers{0};

  // The owner, before it first sleeps: offers the heavy fence where this process can run it.
  void OfferHeavyFences();

  // After this rank's data stores: wakes the owner if it announced that it sleeps.
  void Ring();
  // Wakes the owner whatever it is doing (failure records, which are not channel data).
  void RingAlways();
  // Announce before the last check of the channels; the result is the snapshot for Wait().
  uint32_t Announce();
  void Withdraw() { sleepers.fetch_sub(1, std::memory_order_seq_cst); }
  uint32_t Snapshot() const { return seq.load(std::memory_order_seq_cst); }
  // Sleeps until a ring after `snapshot` was taken, or `timeoutUs` passes. Announce first.
  void Wait(uint32_t snapshot, int timeoutUs);
};

}  // namespace tccl
