// How a staging owner (the staged broadcast's root, every rank of the staged all-gather) copies
// its pieces into the shared scratch its peers read them from (algorithms/staged.cc).
//
// Each slot's lines were read by the other ranks one or two pieces ago. In the development VM's
// slow spells a store to such a line costs ~25 ns (docs/performance.md, "Two states of the VM"),
// and a cached copy of a piece ran 3x slower than the whole chain broadcast; the byte ring's
// sender meets the same and streams while its copies are clearly slow. So the same rule here
// (transports/shm/ring_copy_in.h), the clearly-slow part alone: with several readers per piece
// there is no one receiver's cost to weigh against.
#pragma once

#include <cstddef>

#include "transports/shm/ring_copy_in.h"

namespace tccl {

class SharedScratchCopy {
 public:
  // The ExecEnv::copyToSharedScratch callback; `ctx` is a SharedScratchCopy.
  static void Copy(void* ctx, void* dst, const void* src, size_t n);

 private:
  RingCopyIn copyIn_{nullptr, false};
};

}  // namespace tccl
