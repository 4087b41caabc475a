// The size of this machine's last-level cache, as the kernel describes cpu0's caches (sysfs), for
// decisions that depend on whether a working set fits in it.
#pragma once

#include <cstddef>

namespace tccl {

// TCCL_CACHE_BYTES where it is set above 0; otherwise bytes of the highest-level data or unified
// cache of cpu0, or sysconf's L3 size where sysfs has no cache description; 0 when neither knows.
// Read once.
size_t LastLevelCacheBytes();

// Where LastLevelCacheBytes' value came from: "TCCL_CACHE_BYTES", "sysfs", "sysconf (CPUID; sysfs
// lists no caches)" or "unknown". The CPUID figure is the hypervisor's on a VM and may be the
// whole package's cache, not what the ranks share: tccl-info -t and the TUNING table print both.
const char* LastLevelCacheSource();

// Whether `bytes` of an operation's buffers on this host (every local rank's send and receive
// buffers) outgrow the last-level cache: take more than half of it (measured); false when its
// size is unknown. What the operation writes into its final place is then evicted before anyone
// reads it, so caching it costs a read of each line before the store and a write-back later:
// such receives and local copies are stored past the cache (Op::finalDst). Measured at 2, 4 and
// 8 ranks (docs/performance.md, "The two-shot's all-gather while the slice is in cache", "Local
// copies into their final place", "From half the cache").
bool OutgrowsLastLevelCache(size_t bytes);

}  // namespace tccl
