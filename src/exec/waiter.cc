#include "exec/waiter.h"

#include <poll.h>
#include <sched.h>

#include "core/deadline.h"

#if defined(__x86_64__)
#include <immintrin.h>
#define TCCL_PAUSE() _mm_pause()
#else
#define TCCL_PAUSE() ((void)0)
#endif

namespace tccl {

namespace {
// How long a waiting rank keeps yielding before it sleeps. A yield hands the core to a runnable
// peer at once (~1 us) and keeps this rank runnable, while a futex sleep/wake round trip costs
// ~5-10 us of latency per hop. With R ranks per core a peer may need up to R time slices of other
// ranks' work before it answers; yielding for TCCL_YIELD_US covers that without burning a core
// (a yielding rank only runs when nobody else wants the CPU).
// Longest single sleep: bounds how late a timeout or abort is noticed.
constexpr int kMaxSleepUs = 10000;
// With both shared memory and sockets to watch, sleep on sockets only briefly so doorbell rings
// are not missed for long.
constexpr int kMixedPollMs = 1;
}  // namespace

int UsableCores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return CPU_COUNT(&set);
  return 1;
}

Waiter::Waiter(Doorbell* bell, bool oversubscribed, int spinUs, int yieldUs)
    : bell_(bell), spinUs_(oversubscribed ? 0 : spinUs), yieldUs_(yieldUs) {}

void Waiter::Idle(uint32_t snapshot, std::vector<pollfd>& sockets) {
  const uint32_t pass = idlePasses_++;
  if (pass == 0) phase_ = spinUs_ > 0 ? Phase::Spin : Phase::Yield;
  // The clock is read every kClockPasses-th pass (not the first: most waits end within it).
  if (announced_ || pass % kClockPasses == kClockPasses - 1) {
    const double now = NowSeconds();
    if (idleSince_ == 0) idleSince_ = now;
    const double us = (now - idleSince_) * 1e6;
    phase_ = us < spinUs_ ? Phase::Spin : us < spinUs_ + yieldUs_ ? Phase::Yield : Phase::Sleep;
  }
  if (phase_ == Phase::Spin) {
    // A short pause between polls: one PAUSE takes ~19 ns on the AMD EPYC (Zen 3) machines this
    // was measured on (64 took 1.23 us), and the time between polls is the latency a message
    // sees on arrival, so 4 keep it near 80 ns.
    for (int i = 0; i < 4; ++i) TCCL_PAUSE();
    return;
  }
  if (phase_ == Phase::Yield) {
    sched_yield();
    return;
  }
  if (bell_ && !announced_) {
    bell_->Announce();
    announced_ = true;
    return;
  }
  if (!sockets.empty()) {
    poll(sockets.data(), sockets.size(), bell_ ? kMixedPollMs : kMaxSleepUs / 1000);
    return;
  }
  if (bell_) bell_->Wait(snapshot, kMaxSleepUs);
}

}  // namespace tccl
