// The tag every message starts with (src/exec/op_tag.h): the receiver's checks of it.
#include <gtest/gtest.h>

#include <cstring>

#include "algorithms/schedule.h"
#include "exec/op_tag.h"

// When two ranks frame a message differently (a mismatched call), the receiver reads payload
// where it expects a tag; the report must then say so instead of printing the payload's bytes as
// a sequence number, count and reduction (seen in the fault tests: "all_reduce #4656722015783223296
// (4674736414296899584 x int8, op 128, algorithm 64)").
TEST(OpTagCheck, PayloadReadAsATagIsNotPlausible) {
  tccl::OpTag coll;
  coll.seq = 3;
  coll.count = 4096;
  coll.bytes = 16384;
  coll.kind = (uint8_t)tccl::CollKind::AllReduce;
  coll.dtype = tcclFloat32;
  coll.redop = tcclSum;
  EXPECT_TRUE(tccl::PlausibleTag(coll));
  tccl::OpTag p2p;
  p2p.kind = tccl::OpTag::kP2P;
  p2p.bytes = 64;
  EXPECT_TRUE(tccl::PlausibleTag(p2p));

  float payload[8] = {0.0f, 5.0f, 0.0f, 5.25f, 1.0f, 2.0f, 3.0f, 4.0f};
  tccl::OpTag garbage;
  static_assert(sizeof(payload) == sizeof(garbage), "one tag's worth of floats");
  memcpy(&garbage, payload, sizeof(garbage));
  EXPECT_FALSE(tccl::PlausibleTag(garbage));
  tccl::OpTag zeros;
  const unsigned char zeroBytes[sizeof(zeros)] = {};
  memcpy(&zeros, zeroBytes, sizeof(zeros));
  EXPECT_FALSE(tccl::PlausibleTag(zeros));  // no message has zero bytes
  tccl::OpTag badAlgo = coll;
  badAlgo.algo = 250;
  EXPECT_FALSE(tccl::PlausibleTag(badAlgo));
}

// The receiver compares a message's tag in place with its own and the byte count it expects
// (IsTagWithBytes): equal only when every field is, at any alignment of the received bytes.
TEST(OpTagCheck, InPlaceCompareMatchesEveryFieldAndTheByteCount) {
  tccl::OpTag want;
  want.seq = 7;
  want.count = 1000;
  want.bytes = 999;  // replaced by the expected count
  want.root = 2;
  want.kind = (uint8_t)tccl::CollKind::Reduce;
  want.dtype = tcclFloat32;
  want.redop = tcclMax;
  want.algo = 3;
  unsigned char buf[sizeof(tccl::OpTag) + 8];
  for (size_t offset = 0; offset < 8; ++offset) {
    tccl::OpTag sent = want;
    sent.bytes = 4000;
    memcpy(buf + offset, &sent, sizeof sent);
    EXPECT_TRUE(tccl::IsTagWithBytes(buf + offset, want, 4000)) << "offset " << offset;
    EXPECT_FALSE(tccl::IsTagWithBytes(buf + offset, want, 3996)) << "offset " << offset;
    // Each byte of the tag, changed, makes it another tag.
    for (size_t b = 0; b < sizeof sent; ++b) {
      buf[offset + b] ^= 0x40;
      EXPECT_FALSE(tccl::IsTagWithBytes(buf + offset, want, 4000)) << "offset " << offset << ", byte " << b;
      buf[offset + b] ^= 0x40;
    }
  }
}
