// How a sender copies a message into its shared-memory byte ring: through the cache (memcpy), or,
// while that has become slow, with non-temporal stores that bypass it.
//
// The ring's lines were read by the receiver one lap ago, so its cache may still hold them, and a
// store must first take each line back from it. Usually that is cheap and the ring stays in cache
// (the point of a ring smaller than the caches). On some machines it is not: on the 2-core
// development VM, in spells of seconds to minutes, a store to a line the other vCPU holds costs
// ~25 ns (2.5 GB/s, against 48-98 GB/s otherwise; perf/dirty_transfer_probe.c and
// docs/performance.md, "Two states of the VM"), which makes a 2-rank ring 6x slower. Non-temporal
// stores write whole lines towards memory without taking them from the reader first: 28-29 GB/s
// there in either state, but the receiver then reads the lines from memory (10 GB/s against 38
// from the sender's cache), so they only pay while cached stores are the slower way.
//
// So the sender times its larger cached copies and streams while they run below what streaming
// would cost, re-trying the cache every kStreamedPieces pieces. Nothing here changes what arrives:
// the bytes are the same either way, and a streamed piece is fenced before the ring's head is
// published.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tccl {

// memcpy whose stores are non-temporal where that is possible (x86-64: SSE2 streaming stores for
// the 16-byte-aligned middle of dst; plain copies elsewhere). Callers fence (StreamFence) before
// publishing the data to another thread or process.
void StreamCopy(void* dst, const void* src, size_t n);
void StreamFence();
bool CanStreamCopy();

class RingCopyIn {
 public:
  // Pieces below this are not timed (a clock read costs ~10 ns; a 16 KiB piece takes 0.2-0.5 us
  // cached and 6.5 us at 2.5 GB/s) and always go through the cache.
  static constexpr size_t kTimedBytes = 16 << 10;
  // Where the line lies, from the timed pieces of 16 MiB reduces, broadcasts and all-gathers at
  // 2 ranks on the development VM (docs/performance.md, "Two states of the VM"): while stores to
  // lines the receiver holds are slow, cached pieces run at 2.3-2.7 GB/s; otherwise at 8-27 GB/s
  // (p1 4.9-9.6: a source read from memory, as a broadcast's is, holds them near 10). 4.5 GB/s
  // leaves a factor of ~2 to each side. By cost alone streaming would pay from ~9 GB/s down
  // (streamed, a byte costs the sender 1/28 ns and the receiver, reading it from memory, 1/10 ns;
  // cached, the receiver reads at ~38 GB/s: break-even at a 9 GB/s copy-in), but a copy-in held
  // near 10 GB/s by its source would then flip back and forth, and at 9 GB/s the false switches
  // made the 16 MiB reduce 1.4x slower in the fast state.
  static constexpr double kStreamBelowBytesPerSecond = 4.5e9;
  // Consecutive slow cached pieces before streaming (one alone may be a preemption). Then
  // kStreamedPieces streamed pieces before one cached piece re-tries the cache; a re-try that is
  // slow again streams at once, for twice as many pieces, up to kMaxStreamedPieces (the slow
  // spells last seconds: a 128 KiB piece streams in ~5 us, so 1024 pieces are ~5 ms, and each
  // re-try costs a piece at 2.5 GB/s, ~50 us).
  static constexpr int kSlowPiecesToStream = 2;
  static constexpr int kStreamedPieces = 64;
  static constexpr int kMaxStreamedPieces = 1024;

  // Copies `n` bytes to `dst` in the ring, the way the recent pieces say is faster.
  void Copy(void* dst, const void* src, size_t n);
  // Before the ring's head is published: orders streamed stores before it (no-op otherwise).
  void FenceIfStreamed();

  // What Copy() decides from: the time a cached piece of `n` bytes took. Public for tests.
  void ObserveCached(size_t n, double seconds);
  // Whether the next large piece is streamed; streamed pieces count down to a cached retry.
  bool NextLargePieceStreams();
  bool streaming() const { return streamLeft_ > 0; }

 private:
  int slowPieces_ = 0;
  int streamLeft_ = 0;
  int window_ = kStreamedPieces;  // streamed pieces before the next re-try
  bool retrying_ = false;         // the next timed piece is a re-try after streaming
  bool unfenced_ = false;
};

}  // namespace tccl
