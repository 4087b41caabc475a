// The data path's memcpy. glibc 2.36 copies 4 KiB up to its non-temporal threshold with
// `rep movsb`; on the development VM (AMD EPYC, FSRM) that ran at 1.1-3 GB/s when the destination
// lay 1-31 bytes ahead of the source modulo 64, against 23-86 GB/s otherwise (a malloc'd buffer
// of a few MiB starts 16 bytes past a page; the rings and shared scratch start on one). A 64-byte
// vector loop ran those copies at 25-48 GB/s (perf/misaligned_copy_probe.c; docs/performance.md,
// "Copies whose destination is not aligned like their source").
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

namespace tccl {

// memcpy(dst, src, n) for non-overlapping ranges.
void CopyBytes(void* dst, const void* src, size_t n);

// memcpy whose stores are non-temporal where that is possible (x86-64: SSE2 streaming stores for
// the 16-byte-aligned middle of dst; plain copies elsewhere). Callers fence (StreamFence) before
// publishing the data to another thread or process.
void StreamCopy(void* dst, const void* src, size_t n);
void StreamFence();
bool CanStreamCopy();

#if defined(__x86_64__)
// memcpy in three parts: the head up to `align` (16 or 64) in the destination, then 64-byte lines
// (unaligned loads; aligned stores, non-temporal if kStream, which the caller then fences: the
// StreamCopy of transports/shm/ring_copy_in.h), then the tail.
template <bool kStream>
inline void CopyThroughLines(void* dst, const void* src, size_t n, size_t align) {
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  size_t head = (align - ((uintptr_t)d & (align - 1))) & (align - 1);
  if (head > n) head = n;
  memcpy(d, s, head);
  d += head;
  s += head;
  n -= head;
  for (; n >= 64; n -= 64, d += 64, s += 64) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 32));
    const __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 48));
    if (kStream) {
      _mm_stream_si128(reinterpret_cast<__m128i*>(d), a);
      _mm_stream_si128(reinterpret_cast<__m128i*>(d + 16), b);
      _mm_stream_si128(reinterpret_cast<__m128i*>(d + 32), c);
      _mm_stream_si128(reinterpret_cast<__m128i*>(d + 48), e);
    } else {
      _mm_store_si128(reinterpret_cast<__m128i*>(d), a);
      _mm_store_si128(reinterpret_cast<__m128i*>(d + 16), b);
      _mm_store_si128(reinterpret_cast<__m128i*>(d + 32), c);
      _mm_store_si128(reinterpret_cast<__m128i*>(d + 48), e);
    }
  }
  memcpy(d, s, n);
}
#endif

}  // namespace tccl
