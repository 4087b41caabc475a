#include "kernels/host/copy.h"

#include <cstring>

namespace tccl {

namespace {

// Where glibc's memcpy takes `rep movsb` (from 4 KiB) and where it hands over to its own vector
// loop, which ran at 22-32 GB/s misaligned (measured from 512 KiB on the development VMs: glibc
// stops `rep movsb` at the L2's size on AMD, so it lies elsewhere on other machines, where the
// loop below runs instead of a good memcpy: slower only where memcpy was faster than 23 GB/s).
// That loop stores through the cache up to glibc's non-temporal threshold (192 MiB on the
// 2026-11-27 VM); copies into a final place past the cache use StreamCopy instead.
constexpr size_t kRepMovsbFrom = 4 << 10;
constexpr size_t kRepMovsbTo = 512 << 10;

}  // namespace

void CopyBytes(void* dst, const void* src, size_t n) {
#if defined(__x86_64__)
  // How far the destination lies ahead of the source within a line: 1-31 bytes was the slow case
  // (every 4-byte step measured at 16 KiB, source at 0 and 32: 2-3 GB/s there, 34-59 elsewhere).
  const size_t ahead = ((uintptr_t)dst - (uintptr_t)src) & 63;
  if (n < kRepMovsbFrom || n >= kRepMovsbTo || ahead == 0 || ahead >= 32) {
    memcpy(dst, src, n);
    return;
  }
  // Each part below rep movsb's range: the head and the tail under 64 bytes, the lines by vector.
  CopyThroughLines<false>(dst, src, n, 64);
#else
  memcpy(dst, src, n);
#endif
}

bool CanStreamCopy() {
#if defined(__x86_64__)
  return true;  // SSE2 is part of x86-64
#else
  return false;
#endif
}

void StreamCopy(void* dst, const void* src, size_t n) {
#if defined(__x86_64__)
  // The unaligned head through the cache, then 64 bytes (a line) per iteration, then the tail.
  CopyThroughLines<true>(dst, src, n, 16);
#else
  memcpy(dst, src, n);
#endif
}

void StreamFence() {
#if defined(__x86_64__)
  _mm_sfence();
#endif
}

}  // namespace tccl
