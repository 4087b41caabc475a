// The size of this machine's last-level cache, as the kernel describes cpu0's caches (sysfs), for
// decisions that depend on whether a working set fits in it.
#pragma once

#include <cstddef>

namespace tccl {

// Bytes of the highest-level data or unified cache of cpu0; sysconf's L3 size where sysfs has no
// cache description; 0 when neither knows. Read once.
size_t LastLevelCacheBytes();

}  // namespace tccl
