// How a sender copies a message into its shared-memory byte ring: through the cache (memcpy) or
// with non-temporal stores that bypass it.
//
// The ring's lines were read by the receiver one lap ago, so its cache may still hold them, and a
// store must first take each line back from it. Usually that is cheap and the ring stays in cache
// (the point of a ring smaller than the caches). On some machines it is not: on the 2-core
// development VM, in spells of seconds to minutes, a store to a line the other vCPU holds costs
// ~25 ns (2.5 GB/s, against 48-98 GB/s otherwise; perf/dirty_transfer_probe.c and
// docs/performance.md, "Two states of the VM"), which makes a 2-rank ring 6x slower. Non-temporal
// stores write whole lines towards memory without taking them from the reader first, but the
// receiver then reads the lines from memory instead of the sender's cache.
//
// Two rules decide, both from what the two ends measure of their own copies:
// - Clearly slow: cached pieces below kClearlySlowBytesPerSecond, twice in a row, switch to
//   streaming at once (the slow spells: nothing else copies that slowly), for
//   kWindowAfterClearlySlow pieces before the cache is re-tried.
// - Measured, for a one-way stream with a core at each end: a sender whose cached copy-in costs
//   more than kExploreAbove times the receiver's copy-out per byte is the pipeline's slow stage,
//   so it tries streaming for a few pieces and keeps it if the slower of the two ends then costs
//   clearly less (a 2-rank broadcast root outside the slow spells: copy-in 12-14 GB/s, the
//   broadcast 1.3-1.7x faster streamed). Not where the pair also streams the other way, or ranks
//   share cores: there each core pays both ends, streaming's cost shows up in everything else's
//   memory traffic, and the two ends' figures mispredicted (a 2-rank all-gather measured 25%
//   cheaper streamed by them and ran 1.5x slower; docs/performance.md).
// Nothing here changes what arrives: the bytes are the same either way, and a streamed piece is
// fenced before Copy returns.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "kernels/host/copy.h"  // StreamCopy, StreamFence

namespace tccl {

// Pieces below this are neither timed nor streamed (a clock read costs ~10 ns; a 16 KiB piece
// takes 0.2-0.5 us cached and 6.5 us at 2.5 GB/s).
constexpr size_t kTimedRingBytes = 16 << 10;

// In the channel (shared memory): how each part of the ring was last written, and what reading
// it cost the receiver, by way of writing. Each field has one writer.
struct RingReadCost {
  static constexpr int kSegments = 64;
  // Written by the sender: 1 where segment k (bytes [k, k+1) * capacity / kSegments) was last
  // written streamed. The receiver charges a fragment by its first byte's segment.
  std::atomic<uint8_t> streamed[kSegments];
  // Written by the receiver: CycleNow() ticks spent on, and bytes of, timed fragments, [0] those
  // written through the cache, [1] streamed. Totals since the channel was created.
  alignas(64) std::atomic<uint64_t> cycles[2];
  std::atomic<uint64_t> bytes[2];
};

// The receiver's part: one timed fragment at ring offset `at` (capacity `cap`).
void RecordRingRead(RingReadCost* cost, size_t at, size_t cap, size_t bytes, uint64_t cycles);

class RingCopyIn {
 public:
  // The clearly-slow rule. The VM's slow spells run cached pieces at 2.3-2.7 GB/s; otherwise they
  // ran at 8-43 GB/s (docs/performance.md), so 4.5 leaves a factor of ~2 to each side; one slow
  // piece alone may be a preemption. Such a switch streams kWindowAfterClearlySlow pieces before
  // re-trying the cache (the spells last seconds; a re-try costs a piece at 2.5 GB/s, ~100 us at
  // 256 KiB); a re-tried cached piece this slow ends the re-try at once, and the next comes after
  // twice as many pieces.
  static constexpr double kClearlySlowBytesPerSecond = 4.5e9;
  static constexpr int kClearlySlowInARow = 2;
  static constexpr int kWindowAfterClearlySlow = 64;
  // Where the measured rule applies it can overrule a clearly-slow switch: cached pieces can be
  // that slow for other reasons (at 4 and 8 ranks on 16 cores, a 64 MiB broadcast root's copy-in
  // shares the memory bandwidth), and then streaming does not help. After each such overruling
  // the clearly-slow rule stays quiet for twice as many pieces as the last time (from
  // kWindowAfterClearlySlow up to kMaxWindow): without that the two rules took turns, a switch
  // every ~70 pieces. The measured rule still looks at its own windows meanwhile.

  // The measured rule. Streaming is tried only while the cached copy-in costs more than this many
  // times the receiver's copy-out: streamed pieces cost the receiver 1.5-3x what cached ones do
  // (it reads them from memory), so below that the slower end could only get slower. Measured on
  // the development VM outside the slow spells: 2.3-3.3 for a 2-rank broadcast root, 0.5-1.5 for
  // a reduce's sender.
  static constexpr double kExploreAbove = 2.0;
  // Timed pieces per window (between looks): the first, and the most after explorations that
  // changed nothing. Short at first, because a benchmark's size is over within tens of pieces; at
  // 128 KiB pieces 1024 are 128 MiB, 10-50 ms of copying, so a losing exploration then costs < 1%.
  static constexpr int kFirstWindow = 8;
  static constexpr int kMaxWindow = 1024;
  // Pieces per exploration, compared by the median of the sender's pieces (one preempted piece
  // must not decide) with the window's last kExplorePieces.
  static constexpr int kExplorePieces = 8;
  // After exploring, how many pieces the sender waits for the receiver to have read half the
  // explored bytes before it judges without them (and so keeps its way).
  static constexpr int kMaxJudgePieces = 64;
  // The other way's slower end must cost less than this fraction of the current one's: per-piece
  // costs scatter by ~10% on the development VM, and a gain below that is not worth a wrong switch.
  static constexpr double kSwitchBelow = 0.85;

  // `cost`: the channel's record (the receiver fills in its part). `mayExplore`: the measured rule
  // applies (each end of the pair has a core to itself); otherwise only the clearly-slow one.
  RingCopyIn(RingReadCost* cost, bool mayExplore) : cost_(cost), mayExplore_(mayExplore) {}

  // Copies `n` bytes to `dst`, which lies at offset `at` of the ring of `cap` bytes. Streamed
  // stores are fenced before it returns, so the caller may publish the ring's head at once.
  void Copy(void* dst, size_t at, size_t cap, const void* src, size_t n);
  // The same connection received a timed fragment of `n` bytes the other way: while it does, the
  // pair streams both ways and the measured rule stays out.
  void NoteReceived(size_t n) { receivedBytes_ += n; }

  // What Copy() decides from, public for tests: whether the next timed piece is streamed; the
  // sender's copy of a timed piece of `n` bytes took `cycles` (CycleNow ticks); the clearly-slow
  // line in ticks per byte (Copy sets it once the clock is calibrated; 0: unknown).
  bool NextPieceStreams() const { return exploring_ ? !streamed_ : streamed_; }
  void ObservePiece(size_t n, uint64_t cycles);
  void SetClearlySlow(double ticksPerByte) { clearlySlowPerByte_ = ticksPerByte; }
  bool streaming() const { return streamed_; }  // the way it keeps to (not an exploration)
  bool measures() const { return mayExplore_; }  // the measured rule may apply
  const char* reason() const { return reason_; }  // why it last changed way (for the log)
  int window() const { return window_; }

 private:
  struct ReceiverTotals {
    uint64_t cycles[2], bytes[2];
  };
  ReceiverTotals ReadReceiver() const;
  double KeptMedian();
  void StartWindow(int window);
  bool WorthExploring();
  void Judge(bool final);

  RingReadCost* cost_;
  bool mayExplore_;
  bool streamed_ = false;   // the way it keeps to
  bool exploring_ = false;  // the current pieces go the other way
  bool judging_ = false;    // explored; waiting for the receiver's figures
  bool measured_ = false;   // the measured rule applied in the last window (WorthExploring)
  const char* reason_ = "";
  int window_ = kFirstWindow;
  int left_ = kFirstWindow;  // pieces until the next look
  int judgeLeft_ = 0;
  int slowInARow_ = 0;
  bool streamedBySlowRule_ = false;  // the current streaming began with the clearly-slow rule
  int slowRuleQuiet_ = 0;            // cached pieces before the clearly-slow rule may fire again
  int nextSlowRuleQuiet_ = kWindowAfterClearlySlow;
  double clearlySlowPerByte_ = 0;  // 0: not known yet
  // Per-piece sender costs (ticks per byte): the window's last kExplorePieces, and the
  // exploration's.
  double kept_[kExplorePieces] = {};
  double explored_[kExplorePieces] = {};
  int keptCount_ = 0, exploredCount_ = 0;
  uint64_t sentBytes_ = 0, exploredBytes_ = 0, receivedBytes_ = 0;
  uint64_t windowSent_ = 0, windowReceived_ = 0;  // at the window's start
  ReceiverTotals windowStart_{}, exploreStart_{};
};

}  // namespace tccl
