// The low-latency protocol for small shared-memory messages: data and flag in one cache line.
//
// The byte ring (shm_channel.h) publishes a head and a tail on cache lines of their own, so a
// message costs the receiver two line transfers (head, then data) and the sender a third (tail).
// Here each 64-byte line carries 56 payload bytes and an 8-byte flag written after them (release):
// the receiver polls the line itself, and the flag's arrival brings the payload with it. The flag
// is the line's global index + 1, so lines never need clearing. The receiver returns lines in
// batches (a quarter ring), so the sender reads the consumed count rarely.
//
// 56 bytes is a multiple of every element size, so a reduction can consume line by line.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "transports/transport.h"

namespace tccl {

struct LLLine {
  static constexpr size_t kPayload = 56;
  unsigned char payload[kPayload];
  std::atomic<uint64_t> flag;
};
static_assert(sizeof(LLLine) == 64, "one line per cache line");

struct LLRing {
  // 256 lines (16 KiB) per directed pair: room for a few LL messages in flight, small enough that
  // L*(L-1) rings of 8 ranks stay at 1 MiB.
  static constexpr uint64_t kLines = 256;
  static constexpr uint64_t kReturnBatch = kLines / 4;
  alignas(64) std::atomic<uint64_t> consumed;  // lines the receiver has finished with
  alignas(64) LLLine lines[kLines];
};

// Messages up to this size use the LL ring. Both ends decide from the message size, which both
// know, so they always agree. Above it the byte ring's bulk copies win over 56-byte lines.
constexpr size_t kLLMaxBytes = 1024 + 32;

// The sending end's state: the next global line, and the last consumed count it saw.
struct LLSender {
  LLSender() = default;
  // Continues where `ring` stands (a fresh ring: at line 0 with the whole ring free).
  explicit LLSender(const LLRing& ring)
      : next(ring.consumed.load(std::memory_order_relaxed)), freeUntil(next + LLRing::kLines) {}
  uint64_t next = 0;
  uint64_t freeUntil = LLRing::kLines;  // lines below this may be written without asking
  uint64_t messageLines = 0;            // lines of the message sent last (or being sent)
  // Writes the lines of `data[done, total)` that fit; `done` is always a multiple of 56 (or total).
  size_t Send(LLRing* ring, const void* data, size_t done, size_t total);
  // Claims (claim_lines.h) the lines a message like the last one would write next, among those the
  // receiver has handed back. The receiver polls the next line, so it holds a copy that a store
  // would first have to invalidate, with every later store of the call queued behind it.
  void ClaimNext(LLRing* ring) const;
};

// The receiving end's state: the next global line, and the consumed count last returned.
struct LLReceiver {
  LLReceiver() = default;
  explicit LLReceiver(const LLRing& ring) : next(ring.consumed.load(std::memory_order_relaxed)), returned(next) {}
  uint64_t next = 0;
  uint64_t returned = 0;
  // Delivers the complete lines of `[done, total)` that have arrived to `sink`. Sets *returnedLines
  // when it handed a batch back (the sender may be asleep waiting for it).
  size_t Recv(LLRing* ring, const RecvSink& sink, size_t done, size_t total, bool* returnedLines);
  // Whether the next line has arrived (acquire: what the sender wrote before it is visible).
  bool LineArrived(const LLRing& ring) const {
    return ring.lines[next % LLRing::kLines].flag.load(std::memory_order_acquire) == next + 1;
  }
};

}  // namespace tccl
