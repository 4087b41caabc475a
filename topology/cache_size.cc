#include "topology/cache_size.h"

#include <unistd.h>

#include <cstdlib>
#include <string>

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

size_t Read() {
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
#ifdef _SC_LEVEL3_CACHE_SIZE
  if (best == 0) {
    const long v = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (v > 0) best = (size_t)v;
  }
#endif
  return best;
}

}  // namespace

size_t LastLevelCacheBytes() {
  static const size_t bytes = Read();
  return bytes;
}

bool OutgrowsLastLevelCache(size_t bytes) {
  const size_t cache = LastLevelCacheBytes();
  return cache && bytes > cache;
}

}  // namespace tccl
