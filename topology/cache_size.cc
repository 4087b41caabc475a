#include "topology/cache_size.h"

#include <unistd.h>

#include <cstdlib>
#include <string>

#include "config/params.h"
#include "topology/read_first_line.h"

namespace tccl {

namespace {

// "32768K", "32M" or a plain byte count.
size_t ParseSize(const std::string& s) {
  char* end = nullptr;
  const unsigned long long v = strtoull(s.c_str(), &end, 10);
  if (end == s.c_str()) return 0;
  if (*end == 'K') return (size_t)v << 10;
  if (*end == 'M') return (size_t)v << 20;
  if (*end == 'G') return (size_t)v << 30;
  return (size_t)v;
}

struct Described {
  size_t bytes = 0;
  const char* source = "unknown";
};

Described Read() {
  int bestLevel = 0;
  size_t best = 0;
  for (int i = 0; i < 16; ++i) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    const std::string level = ReadFirstLine(dir + "level");
    if (level.empty()) break;
    if (ReadFirstLine(dir + "type") == "Instruction") continue;
    const int l = atoi(level.c_str());
    const size_t bytes = ParseSize(ReadFirstLine(dir + "size"));
    if (l > bestLevel && bytes > 0) {
      bestLevel = l;
      best = bytes;
    }
  }
  if (best > 0) return {best, "sysfs"};
#ifdef _SC_LEVEL3_CACHE_SIZE
  // glibc's reading of CPUID, which a VM's hypervisor fills in: on the 2-vCPU Zen 5 EPYC VM
  // (2026-12-02), whose kernel lists no caches in sysfs, the whole package's 508 MiB where a core
  // group shares 32 MiB (docs/performance.md, "A cache the machine does not describe").
  const long v = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (v > 0) return {(size_t)v, "sysconf (CPUID; sysfs lists no caches)"};
#endif
  return {};
}

const Described& Assumed() {
  static const Described d = [] {
    const int64_t set = ParamInt("CACHE_BYTES");
    return set > 0 ? Described{(size_t)set, "TCCL_CACHE_BYTES"} : Read();
  }();
  return d;
}

}  // namespace

size_t LastLevelCacheBytes() { return Assumed().bytes; }

const char* LastLevelCacheSource() { return Assumed().source; }

bool OutgrowsLastLevelCache(size_t bytes) {
  // Half the cache, measured: the rings, the peers' data in flight and whatever else shares the
  // cache take the rest. At 2 ranks on the 32 MiB development VM, streaming from buffers above
  // 16 MiB instead of 32 made 6-8 MiB all-gathers and broadcasts 1.8-1.9x faster and all-reduces
  // 14-16% (7-8 rounds of 8), and at 4 and 8 ranks the all-gather and broadcast faster too; from
  // above 8 MiB, 4 MiB all-gathers ran 1.4x slower (docs/performance.md, "From half the cache").
  const size_t cache = LastLevelCacheBytes();
  return cache && bytes > cache / 2;
}

}  // namespace tccl
