// Dekker handshakes whose frequent side skips its fence. Two users: the shared-memory doorbell
// (transports/shm/doorbell.h) — the ringer checks for a sleeper after every message it sends, the
// sleeper announces itself after a millisecond of idling — and the API's hazard slots
// (src/api/hazard_slots.h) — every call publishes the communicator it uses, a destroy checks for
// callers. On x86 the frequent side's fence (between its store and its load) waits for its stores
// to drain: for the ringer, the message's line leaving the receiver's cache, 25 ns of a 150 ns
// 8-byte broadcast at 2 ranks on the development VM. membarrier(2)'s
// MEMBARRIER_CMD_GLOBAL_EXPEDITED lets the rare side run that fence for it: a full barrier on every
// CPU running a thread of a process registered for it (a thread not running has passed the
// scheduler's barrier). Measured on the development VM: 0.13 us with no registered thread running
// elsewhere, 14 us with one (an IPI through the hypervisor) — paid once per sleep, after 1 ms of
// idling (TCCL_YIELD_US), and once per communicator destroyed.
#pragma once

#include <atomic>

namespace tccl {

namespace fence_detail {
extern std::atomic<bool> registered;  // set once registering succeeded
bool RegisterOnce();
}  // namespace fence_detail

// Registers this process, once, as a target of heavy fences. False where the kernel (before 4.16)
// or a seccomp filter (valgrind, some containers) refuses: this process's rings then fence, and its
// calls take references to their communicators. Inline, one load once registered: every doorbell
// ring asks (a call through the PLT per message otherwise).
inline bool RegisteredForHeavyFences() {
  return fence_detail::registered.load(std::memory_order_relaxed) || fence_detail::RegisterOnce();
}

// A full memory barrier on every CPU now running a thread of a registered process, this one's
// included. False if the kernel refused.
bool HeavyFence();

}  // namespace tccl
