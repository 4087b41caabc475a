// One directed shared-memory channel: a single-producer single-consumer byte ring, plus the
// low-latency line ring that carries messages of up to kLLMaxBytes (ll_ring.h).
// Positions are monotonic 64-bit byte counts; head is written only by the sender, tail only by the
// receiver, each on its own cache line. Every message starts at a 16-byte-aligned position, so an
// element (at most 8 bytes) never straddles the wrap and the receiver can reduce straight from the
// ring.
//
// In operations whose rings outgrow the cache (ShmHost::RingRestartFor), a message that finds the
// ring empty may start over at ring offset 0 instead of where the last one ended (`RestartRecord`):
// the sender records the move next to the head, on the line the receiver reads anyway. Without it,
// calls in a loop walk each ring through its whole capacity, and at 8 ranks 56 rings of 1 MiB are
// 56 MiB against a 32 MiB last-level cache: every copy-in then writes lines that have left the
// cache (docs/performance.md, "Rings that start over").
#pragma once

#include <atomic>
#include <cstdint>

#include "transports/shm/ll_ring.h"
#include "transports/shm/ring_copy_in.h"

namespace tccl {

// The last message the sender moved to the start of the ring: it would have started at `from` and
// starts at `to` (a multiple of the capacity). Written before the head that publishes the message;
// one at a time, since a move needs an empty ring, so the receiver has passed the previous one.
struct RestartRecord {
  std::atomic<uint64_t> from;
  std::atomic<uint64_t> to;
};

struct ShmChannel {
  alignas(64) std::atomic<uint64_t> head;  // bytes published by the sender
  RestartRecord restart;                   // the sender's; on head's line (read with it)
  alignas(64) std::atomic<uint64_t> tail;  // bytes consumed by the receiver
  alignas(64) std::atomic<uint64_t> copied;  // single-copy messages the receiver has read (single_copy.h)
  LLRing ll;                               // small messages (ll_ring.h)
  alignas(64) RingReadCost readCost;       // how the byte ring was written, what reading it cost (ring_copy_in.h)
  alignas(64) unsigned char data[1];       // ring bytes follow (capacity set by the segment)

  static size_t BytesFor(size_t capacity) { return sizeof(ShmChannel) + ((capacity + 63) & ~size_t(63)); }
};

constexpr uint64_t kShmMessageAlign = 16;
inline uint64_t AlignMessage(uint64_t pos) {
  return (pos + kShmMessageAlign - 1) & ~(kShmMessageAlign - 1);
}

}  // namespace tccl
