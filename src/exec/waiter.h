// How a rank waits for its peers without burning a core another rank needs (SPEC section 9):
// poll briefly, then yield, then sleep on the shared-memory doorbell (futex) or on the TCP sockets
// (poll). When this host runs more ranks than it has cores, the polling phase is skipped: a
// spinning rank would only delay the peer it is waiting for.
#pragma once

#include <poll.h>

#include <cstdint>
#include <vector>

#include "transports/shm/doorbell.h"

namespace tccl {

class Waiter {
 public:
  Waiter(Doorbell* bell, bool oversubscribed, int spinUs, int yieldUs);

  // Call before trying to make progress; pass the result to Idle() if nothing moved.
  uint32_t Arm() const { return announced_ ? bell_->Snapshot() : 0; }
  // Something moved: start the spin-yield-sleep sequence again.
  void Progressed() {
    idleSince_ = 0;
    idlePasses_ = 0;
    Withdraw();
  }
  // Whether the caller should run its slower checks (deadline, peer health) before this Idle():
  // every pass once sleeping, else every kClockPasses-th. Reading the clock costs 26 ns in the
  // development VM, and the vDSO was 12% of an 8-byte all-reduce's profile when read on every poll.
  bool ChecksDue() const { return announced_ || idlePasses_ % kClockPasses == kClockPasses - 1; }
  // The operation ended (any way): peers need not ring for this rank any more.
  void Done() { Progressed(); }
  // `sockets`: the sockets the blocked operations wait on, with the events they need. Before the
  // first sleep this only announces the sleep and returns: the caller polls once more, then sleeps
  // at its next call (see doorbell.h).
  void Idle(uint32_t snapshot, std::vector<pollfd>& sockets);

 private:
  Doorbell* bell_;
  int spinUs_;
  int yieldUs_;
  static constexpr uint32_t kClockPasses = 16;  // ~2 us of polling between clock reads
  enum class Phase { Spin, Yield, Sleep };
  Phase phase_ = Phase::Spin;  // from the last clock read
  double idleSince_ = 0;       // the first clock read of this wait
  uint32_t idlePasses_ = 0;
  bool announced_ = false;

  void Withdraw() {
    if (!announced_) return;
    bell_->Withdraw();
    announced_ = false;
  }
};

// Cores this process may run on.
int UsableCores();

}  // namespace tccl
