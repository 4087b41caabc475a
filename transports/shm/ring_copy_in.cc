#include "transports/shm/ring_copy_in.h"

#include <algorithm>
#include <cstring>

#include "core/cycle_clock.h"
#include "kernels/host/copy.h"


namespace tccl {

namespace {

double Median(double* v, int n) {
  std::nth_element(v, v + n / 2, v + n);
  return v[n / 2];
}

int SegmentOf(size_t at, size_t cap) { return (int)(at * RingReadCost::kSegments / cap); }

}  // namespace

void RecordRingRead(RingReadCost* cost, size_t at, size_t cap, size_t bytes, uint64_t cycles) {
  const int way = cost->streamed[SegmentOf(at, cap)].load(std::memory_order_relaxed) ? 1 : 0;
  // One writer (the receiver): plain read-modify-write, no locked instruction.
  cost->cycles[way].store(cost->cycles[way].load(std::memory_order_relaxed) + cycles, std::memory_order_relaxed);
  cost->bytes[way].store(cost->bytes[way].load(std::memory_order_relaxed) + bytes, std::memory_order_relaxed);
}

double RingCopyIn::KeptMedian() { return Median(kept_, std::min(keptCount_, kExplorePieces)); }

// Only the measured rule uses the receiver's figures; without it they are not read (a line the
// receiver keeps writing).
RingCopyIn::ReceiverTotals RingCopyIn::ReadReceiver() const {
  ReceiverTotals t{};
  if (!mayExplore_) return t;
  for (int w = 0; w < 2; ++w) {
    t.cycles[w] = cost_->cycles[w].load(std::memory_order_relaxed);
    t.bytes[w] = cost_->bytes[w].load(std::memory_order_relaxed);
  }
  return t;
}

void RingCopyIn::StartWindow(int window) {
  window_ = left_ = window;
  exploring_ = judging_ = false;
  slowInARow_ = keptCount_ = 0;
  windowStart_ = ReadReceiver();
  windowSent_ = sentBytes_;
  windowReceived_ = receivedBytes_;
}

void RingCopyIn::ObservePiece(size_t n, uint64_t cycles) {
  if (n < kTimedRingBytes) return;
  sentBytes_ += n;
  const double perByte = (double)cycles / (double)n;
  const bool clearlySlow = clearlySlowPerByte_ > 0 && perByte > clearlySlowPerByte_;
  if (exploring_) {
    // The first piece of a re-try of the cache decides alone if it is clearly slow (still in the
    // spell: lost already) or if only the clearly-slow rule applies (the spell is over). Later
    // pieces are judged together: at 64 MiB a reduce's cached pieces straddle the line (4-7 GB/s,
    // the source coming from memory), and ending on any slow one kept it streaming 10-15% slower.
    if (streamed_ && exploredCount_ == 0 && clearlySlow) {
      StartWindow(std::min(2 * window_, kMaxWindow));
      return;
    }
    if (streamed_ && !measured_) {
      streamed_ = streamedBySlowRule_ = false;
      reason_ = "a re-try of the cache was not clearly slow";
      StartWindow(kFirstWindow);
      return;
    }
    explored_[exploredCount_++] = perByte;
    exploredBytes_ += n;
    if (exploredCount_ == kExplorePieces) {
      exploring_ = false;
      judging_ = true;
      judgeLeft_ = kMaxJudgePieces;
    }
    return;
  }
  kept_[keptCount_++ % kExplorePieces] = perByte;
  if (!streamed_) {
    if (slowRuleQuiet_ > 0) {
      --slowRuleQuiet_;
    } else {
      slowInARow_ = clearlySlow ? slowInARow_ + 1 : 0;
      if (slowInARow_ >= kClearlySlowInARow) {
        streamed_ = streamedBySlowRule_ = true;
        reason_ = "cached pieces clearly slow (below 4.5 GB/s) twice in a row";
        StartWindow(kWindowAfterClearlySlow);
        return;
      }
    }
  }
  if (judging_) {
    Judge(--judgeLeft_ == 0);
    return;
  }
  if (--left_ > 0) return;
  exploreStart_ = ReadReceiver();
  if (!WorthExploring()) {
    StartWindow(window_);
    return;
  }
  exploring_ = true;
  exploredCount_ = 0;
  exploredBytes_ = 0;
}

// While streaming, the cache is always worth a re-try. Through the cache, streaming is tried only
// under the measured rule, on a one-way stream (the pair received less than a quarter of what it
// sent during the window), and where the cached copy-in costs over kExploreAbove times the
// receiver's copy-out (without the receiver's figures, nothing is known of the other end).
bool RingCopyIn::WorthExploring() {
  measured_ = mayExplore_ && 4 * (receivedBytes_ - windowReceived_) < sentBytes_ - windowSent_;
  if (streamed_) return true;
  if (!measured_) return false;
  const uint64_t read = exploreStart_.bytes[0] - windowStart_.bytes[0];
  if (read == 0 || keptCount_ == 0) return false;
  const double receiver = (double)(exploreStart_.cycles[0] - windowStart_.cycles[0]) / read;
  return KeptMedian() > kExploreAbove * receiver;
}

// One way against the other by the slower of the two ends per byte (a one-way pipeline runs at
// its slowest stage): the sender's from the medians of its pieces, the receiver's from its totals
// (the kept way's over the window, the explored way's since the exploration began).
void RingCopyIn::Judge(bool final) {
  const ReceiverTotals now = ReadReceiver();
  const int x = streamed_ ? 0 : 1, k = 1 - x;
  const uint64_t readX = now.bytes[x] - exploreStart_.bytes[x];
  if (!final && 2 * readX < exploredBytes_) return;
  const uint64_t readK = exploreStart_.bytes[k] - windowStart_.bytes[k];
  bool switchWay = false;
  if (readX > 0 && readK > 0 && keptCount_ > 0) {
    const double costX = std::max(Median(explored_, exploredCount_),
                                  (double)(now.cycles[x] - exploreStart_.cycles[x]) / readX);
    const double costK = std::max(KeptMedian(),
                                  (double)(exploreStart_.cycles[k] - windowStart_.cycles[k]) / readK);
    switchWay = costX < kSwitchBelow * costK;
  }
  if (switchWay) {
    streamed_ = !streamed_;
    reason_ = "measured: the slower end costs less this way";
    if (!streamed_ && streamedBySlowRule_) {
      slowRuleQuiet_ = nextSlowRuleQuiet_;
      nextSlowRuleQuiet_ = std::min(2 * nextSlowRuleQuiet_, kMaxWindow);
    }
    streamedBySlowRule_ = false;
    StartWindow(kFirstWindow);
  } else {
    StartWindow(std::min(2 * window_, kMaxWindow));
  }
}

void RingCopyIn::Copy(void* dst, size_t at, size_t cap, const void* src, size_t n) {
  if (n < kTimedRingBytes || !CanStreamCopy()) {
    CopyBytes(dst, src, n);
    return;
  }
  if (clearlySlowPerByte_ == 0) {
    // Known once the clock is calibrated (10 ms after its first use); until then only the
    // measured rule runs.
    const double secondsPerCycle = SecondsPerCycleIfCalibrated();
    if (secondsPerCycle > 0) SetClearlySlow(1.0 / (kClearlySlowBytesPerSecond * secondsPerCycle));
  }
  const bool stream = NextPieceStreams();
  // Mark the segments this piece covers for the receiver (a store only where the way changed:
  // the receiver reads this line for every timed fragment); only the measured rule needs them.
  const uint8_t mark = stream ? 1 : 0;
  if (mayExplore_)
    for (int s = SegmentOf(at, cap), last = SegmentOf(at + n - 1, cap); s <= last; ++s)
      if (cost_->streamed[s].load(std::memory_order_relaxed) != mark)
        cost_->streamed[s].store(mark, std::memory_order_relaxed);
  const uint64_t t0 = CycleNow();
  if (stream) {
    // Fenced inside the timed span: the fence waits for the streamed lines to drain, part of what
    // streaming costs; and it orders them before the ring's head that the caller publishes next.
    StreamCopy(dst, src, n);
    StreamFence();
  } else {
    CopyBytes(dst, src, n);
  }
  const uint64_t t1 = CycleNow();
  ObservePiece(n, t1 > t0 ? t1 - t0 : 0);
}

}  // namespace tccl
