#include "transports/shm/ring_copy_in.h"

#include <algorithm>
#include <cstring>

#include "core/cycle_clock.h"

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

namespace tccl {

bool CanStreamCopy() {
#if defined(__x86_64__)
  return true;  // SSE2 is part of x86-64
#else
  return false;
#endif
}

void StreamCopy(void* dst, const void* src, size_t n) {
#if defined(__x86_64__)
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  // The unaligned head through the cache, then 64 bytes (a line) per iteration, then the tail.
  size_t head = (16 - ((uintptr_t)d & 15)) & 15;
  if (head > n) head = n;
  memcpy(d, s, head);
  d += head;
  s += head;
  n -= head;
  for (; n >= 64; n -= 64, d += 64, s += 64) {
    __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
    __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 16));
    __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 32));
    __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(d), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + 48), e);
  }
  memcpy(d, s, n);
#else
  memcpy(dst, src, n);
#endif
}

void StreamFence() {
#if defined(__x86_64__)
  _mm_sfence();
#endif
}

void RingCopyIn::ObserveCached(size_t n, double seconds) {
  if (n < kTimedBytes) return;
  const bool slow = seconds > 0 && (double)n / seconds < kStreamBelowBytesPerSecond;
  if (retrying_) {
    retrying_ = false;
    if (slow) {
      window_ = std::min(2 * window_, kMaxStreamedPieces);
      streamLeft_ = window_;
      return;
    }
    window_ = kStreamedPieces;
  }
  slowPieces_ = slow ? slowPieces_ + 1 : 0;
  if (slowPieces_ >= kSlowPiecesToStream) {
    slowPieces_ = 0;
    streamLeft_ = window_;
  }
}

bool RingCopyIn::NextLargePieceStreams() {
  if (streamLeft_ == 0) return false;
  // The piece after the last streamed one goes through the cache: a re-try.
  if (--streamLeft_ == 0) retrying_ = true;
  return true;
}

void RingCopyIn::Copy(void* dst, const void* src, size_t n) {
  if (n < kTimedBytes || !CanStreamCopy()) {
    memcpy(dst, src, n);
    return;
  }
  if (NextLargePieceStreams()) {
    StreamCopy(dst, src, n);
    unfenced_ = true;
    return;
  }
  const uint64_t t0 = CycleNow();
  memcpy(dst, src, n);
  const uint64_t t1 = CycleNow();
  // Until the clock is calibrated (the first 10 ms after its first use) pieces are not judged.
  const double secondsPerCycle = SecondsPerCycleIfCalibrated();
  if (secondsPerCycle > 0 && t1 > t0) ObserveCached(n, (double)(t1 - t0) * secondsPerCycle);
}

void RingCopyIn::FenceIfStreamed() {
  if (!unfenced_) return;
  unfenced_ = false;
  StreamFence();
}

}  // namespace tccl
