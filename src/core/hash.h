// splitmix64's finaliser: a cheap, well-mixed 64-bit hash used wherever tccl derives ids or
// pseudo-random values deterministically (child communicator ids, benchmark data, simulator trees).
#pragma once

#include <cstdint>

namespace tccl {

inline uint64_t Mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// A string's hash (names of cache files).
inline uint64_t HashString(const char* s, uint64_t seed = 0) {
  uint64_t h = Mix64(seed);
  for (; *s; ++s) h = Mix64(h ^ (unsigned char)*s);
  return h;
}

}  // namespace tccl
