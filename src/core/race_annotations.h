// Tell ThreadSanitizer about a hand-off it cannot see.
//
// Ranks that are threads of one process each map the shared-memory segment at their own address,
// so the release store of a ring's head and the acquire load of it are, to ThreadSanitizer, two
// unrelated atomics. That is harmless while both sides only touch the segment, but a single-copy
// message in pointer mode (transports/shm/single_copy.h) has the receiver read the sender's own
// buffer: the real ordering (header published, then read; copy done, then counter bumped) must be
// stated on an address both threads share, the buffer itself. Without ThreadSanitizer these are
// no-ops.
#pragma once

#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#endif

namespace tccl {

// Everything this thread wrote before this call happens before a later TakeOver(addr).
inline void AnnotateHandOff(const void* addr) {
#if defined(__SANITIZE_THREAD__)
  __tsan_release(const_cast<void*>(addr));
#else
  (void)addr;
#endif
}

inline void AnnotateTakeOver(const void* addr) {
#if defined(__SANITIZE_THREAD__)
  __tsan_acquire(const_cast<void*>(addr));
#else
  (void)addr;
#endif
}

}  // namespace tccl
