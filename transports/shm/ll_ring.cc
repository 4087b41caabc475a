#include "transports/shm/ll_ring.h"

#include <algorithm>
#include <cstring>

#include "transports/shm/claim_lines.h"

namespace tccl {

namespace {
// A line's payload copied with a size the compiler knows when the line is full (a few vector
// moves inline instead of a call to memcpy: every line but a message's last is full).
inline void CopyLine(void* dst, const void* src, size_t n) {
  if (n == LLLine::kPayload) memcpy(dst, src, LLLine::kPayload);
  else memcpy(dst, src, n);
}
}  // namespace

size_t LLSender::Send(LLRing* ring, const void* data, size_t done, size_t total) {
  const auto* src = static_cast<const unsigned char*>(data);
  size_t sent = 0;
  if (done == 0) messageLines = 0;
  while (done + sent < total) {
    if (next >= freeUntil) {
      freeUntil = ring->consumed.load(std::memory_order_acquire) + LLRing::kLines;
      if (next >= freeUntil) break;  // the receiver still holds every line
    }
    LLLine& line = ring->lines[next % LLRing::kLines];
    size_t n = std::min(LLLine::kPayload, total - done - sent);
    CopyLine(line.payload, src + done + sent, n);
    line.flag.store(next + 1, std::memory_order_release);
    ++next;
    ++messageLines;
    sent += n;
  }
  return sent;
}

void LLSender::ClaimNext(LLRing* ring) const {
  if (!CanClaimLines()) return;
  // Only lines the receiver has handed back: the others it may still be reading.
  const uint64_t end = std::min(next + messageLines, freeUntil);
  for (uint64_t i = next; i < end; ++i) ClaimLine(&ring->lines[i % LLRing::kLines]);
}

size_t LLReceiver::Recv(LLRing* ring, const RecvSink& sink, size_t done, size_t total, bool* returnedLines) {
  size_t got = 0;
  while (done + got < total) {
    LLLine& line = ring->lines[next % LLRing::kLines];
    if (line.flag.load(std::memory_order_acquire) != next + 1) break;
    size_t n = std::min(LLLine::kPayload, total - done - got);
    if (sink.direct)
      CopyLine(static_cast<unsigned char*>(sink.direct) + done + got, line.payload, n);
    else
      sink.consume(sink.ctx, line.payload, done + got, n);
    ++next;
    got += n;
  }
  // Return lines in batches; the sender only looks when it runs out, and a full ring always has
  // a whole batch to return, so the two ends cannot wait on each other.
  if (next - returned >= LLRing::kReturnBatch) {
    returned = next;
    ring->consumed.store(returned, std::memory_order_release);
    *returnedLines = true;
  }
  return got;
}

}  // namespace tccl
