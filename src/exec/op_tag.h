// Every message on the wire is preceded by an OpTag naming the operation it belongs to. A rank
// that receives a tag different from the one it expects (another collective, count, dtype,
// reduction, root or algorithm at the same sequence number, or a send/recv of another size)
// reports the mismatch before a single payload byte is consumed, so mismatched calls across ranks
// end in an error instead of a hang or silent corruption (SPEC section 5).
//
// 32 bytes per message: negligible for bulk data; for the smallest messages the cost is measured
// in docs/faults.md. Ranks of one job share an architecture, so the tag travels in host order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

namespace tccl {

struct OpTag {
  static constexpr uint8_t kP2P = 0xFF;  // kind of a send/recv message (seq is 0 for those)

  uint64_t seq = 0;    // collective sequence number on the communicator
  uint64_t count = 0;  // the call's element count
  uint64_t bytes = 0;  // bytes of this message
  int32_t root = -1;
  uint8_t kind = 0;    // CollKind, or kP2P
  uint8_t dtype = 0;   // tcclDataType_t
  uint8_t redop = 0;   // tcclRedOp_t
  uint8_t algo = 0;    // index in AllAlgorithms()
};
static_assert(sizeof(OpTag) == 32, "OpTag is a 32-byte wire record");
static_assert(std::has_unique_object_representations_v<OpTag>, "no padding: equal bytes are equal fields");

// Whether the 32 bytes at `got` (any alignment) are `want` with `bytes` in its byte count,
// compared in place. Building the expected tag first (a copy of `want` with `bytes` stored into
// it) makes the compare's 16-byte loads wait for that 8-byte store: on x86 a load cannot be
// forwarded from a narrower store still in the store buffer, a stall of ~15 cycles on every
// received message (docs/performance.md, "Calls without reference counts").
inline bool IsTagWithBytes(const void* got, const OpTag& want, uint64_t bytes) {
  constexpr size_t at = offsetof(OpTag, bytes), after = at + sizeof(uint64_t);
  const auto* g = static_cast<const unsigned char*>(got);
  const auto* w = reinterpret_cast<const unsigned char*>(&want);
  uint64_t gotBytes;
  memcpy(&gotBytes, g + at, sizeof gotBytes);
  return gotBytes == bytes && memcmp(g, w, at) == 0 && memcmp(g + after, w + after, sizeof(OpTag) - after) == 0;
}

// "all_reduce #12 (4096 x float, sum, ring)"; safe for any bytes (unknown values are printed as numbers).
std::string DescribeTag(const OpTag& t);
// "" when `got` is the message `want` describes, else a sentence naming every difference.
std::string CompareTags(const OpTag& got, const OpTag& want);
// Whether `t` could have been written by a rank at all (known operation, dtype, reduction and
// algorithm; a message of at least one byte). When two ranks frame a message differently (their
// calls differ in size, so one sends the tag apart from the payload while the other expects both
// in one message), the bytes read as a tag are payload, and their fields mean nothing.
bool PlausibleTag(const OpTag& t);
// For a received tag that is not SameTag as the expected one, from `peer` ("rank 1 (host ...)"):
// what follows "mismatched calls across ranks: " in the error. Says that the peer's message was
// framed for another call when `got` is not PlausibleTag, else describes `got` and every difference.
std::string DescribeMismatch(const OpTag& got, const OpTag& want, const std::string& peer);

}  // namespace tccl
