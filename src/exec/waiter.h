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
  uint32_t Arm() const { return bell_ ? bell_->Snapshot() : 0; }
  void Progressed() { idleSince_ = 0; }
  // `sockets`: the sockets the blocked operations wait on, with the events they need.
  void Idle(uint32_t snapshot, std::vector<pollfd>& sockets);

 private:
  Doorbell* bell_;
  int spinUs_;
  int yieldUs_;
  double idleSince_ = 0;
};

// Cores this process may run on.
int UsableCores();

}  // namespace tccl
