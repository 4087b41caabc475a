// Claiming cache lines before writing them. A line that a peer on another core has read (a
// receiver polls the line a sender writes next) must be invalidated there before this core can
// store to it; x86 makes stores visible in program order, so every later store waits behind that
// one, and a call with a few hundred stores stalls for the whole round trip between the cores.
// PREFETCHW asks for ownership without a store and holds nothing up: made early, the
// invalidation overlaps other work (docs/performance.md, "Claiming the next lines").
#pragma once

namespace tccl {

// Whether this CPU has PREFETCHW (not in the x86-64 baseline: CPUID 0x80000001 ECX bit 8; AMD
// since K8, Intel since Broadwell). Asked once.
bool CanClaimLines();

// Asks for ownership of the cache line holding `p`; a hint, never a fault. Call only where
// CanClaimLines() is true.
inline void ClaimLine(const void* p) {
#if defined(__x86_64__)
  __asm__ volatile("prefetchw %0" ::"m"(*static_cast<const char*>(p)));
#else
  (void)p;
#endif
}

}  // namespace tccl
