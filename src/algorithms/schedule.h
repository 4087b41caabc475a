// Algorithms are data (SPEC section 9): a generator turns (collective, N, rank, count, dtype,
// chunking) into a per-rank Schedule — a list of Steps, each a set of Ops that may progress
// concurrently. One executor (src/exec/executor) runs schedules over any transport, and one
// simulator (src/exec/simulator) runs them with no transport to check them for any N.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "tccl/tccl.h"

namespace tccl {

// Buffers an op can name. Send/Recv are the user's buffers, Scratch is per-operation temporary
// memory of Schedule::scratchElems elements; p2p ops name extra user buffers kUserBuf + i.
enum : int { kSendBuf = 0, kRecvBuf = 1, kScratchBuf = 2, kUserBuf = 3 };

struct BufRef {
  int buf = kSendBuf;
  size_t offset = 0;  // in elements
};

enum class OpKind {
  Send,        // send `count` elements at src to peer
  Recv,        // receive `count` elements from peer into dst
  RecvReduce,  // dst = src OP incoming-from-peer (src may equal dst)
  Copy,        // dst = src, locally
  Divide,      // dst /= nranks (avg)
  TreeReduce,  // dst = canonical-order reduction of nranks inputs: input i is at
               //   src + i*stride for i != rank, and at `own` for i == rank
  Reduce,      // dst = src OP own, locally
};

struct Op {
  OpKind kind = OpKind::Copy;
  int peer = -1;
  BufRef src, dst, own;
  size_t count = 0;
  size_t stride = 0;
  // Index of an op of the same step that must complete before this one starts. A send with one
  // sends what that op (a receive or receive-and-reduce) writes: its data is read (a small one
  // staged) only then. Every other send's data is read when its step starts.
  int after = -1;
  // Filled in by PrepareSchedule (exec/executor.h) for messages: the index of the op before this
  // one on the same connection and direction in its step (-1: none), which must finish before this
  // one moves, since connections are ordered byte streams; and where in the executor's staging
  // this message's tag (and a small message's payload) is kept.
  int prevOnStream = -1;
  size_t stageAt = 0;
  // Filled in by PrepareSchedule for a receive-and-reduce that a send of its step waits for
  // (`after`) to send on what it wrote, to the same peer, all of it: that send's index (-1: none).
  // The executor may then hand each reduced piece to the send as it is made (its forward).
  int forwardTo = -1;
  // A receive (or receive-reduce) into its final place, which the schedule does not read again:
  // where the operation's buffers outgrow the cache, a transport may store it past the cache
  // (ShmOperation::streamOutputs).
  bool finalDst = false;
};

struct Step {
  std::vector<Op> ops;
};

struct Schedule {
  std::vector<Step> steps;
  size_t scratchElems = 0;
  // The scratch is staging that peers read: the communicator takes it from memory every local peer
  // can map (CollArgs::sharedScratchBytes), so its messages are read in one copy. Other scratch
  // stays private (a peer reading lines just written in the writer's cache is slower than the
  // ring, docs/single_copy.md).
  bool sharedScratch = false;
  // The element size PrepareSchedule filled in Op::prevOnStream and Op::stageAt for (0: not
  // prepared; the executor prepares a copy), and the staging bytes of the largest step.
  size_t preparedForElemSize = 0;
  size_t stagingBytes = 0;
};

enum class CollKind { AllReduce, Broadcast, Reduce, AllGather, ReduceScatter, AllToAll };
const char* CollName(CollKind k);

// What every rank of one collective call knows; schedules are a pure function of it.
struct CollArgs {
  CollKind kind = CollKind::AllReduce;
  int nranks = 1;
  int rank = 0;
  size_t count = 0;      // per the C API: all-gather sendcount, reduce-scatter recvcount, ...
  size_t elemSize = 4;
  tcclRedOp_t op = tcclSum;
  int root = 0;
  bool inPlace = false;
  size_t sliceElems = 1 << 15;  // pipelining slice
  // Strict determinism and an order-sensitive reduction (float sum/prod/avg): only algorithms
  // that reduce in the canonical order may run. Integer, max and min results are exact anyway.
  bool requireCanonical = false;
  // Messages of at least this many bytes are read by the receiver straight from the sender's
  // buffer (transports/shm/single_copy.h): the cost model counts no copy for the sender. 0: every
  // message is copied in and out of a channel. Set only when every peer is on this host and can
  // read this call's buffers.
  size_t singleCopyBytes = 0;
  // Those reads are CMA system calls (a broadcast where BroadcastByCma holds), not loads through a
  // mapping: the cost model charges each such message a hop, so the fewest messages win.
  bool singleCopyByCma = false;
  // The same threshold for messages sent from the scratch of a Schedule::sharedScratch schedule:
  // set when every rank is on this host and every local rank can map every other's memory (the
  // same on every rank, whatever the call's buffers). 0: such scratch is private and copied.
  size_t sharedScratchBytes = 0;
  // Messages of at most this many bytes travel as lines that carry their own flags (the shared-memory
  // LL protocol); larger ones go through a ring with a header and a credit. The cost model charges
  // ranks sharing cores a hand-over for each of the larger ones only (ModeledUs). Set where every
  // peer is on this host; 0: every message counts.
  size_t lineMessageBytes = 0;
  // What a rank may have sent to a peer and the peer not yet taken before its sends wait for the
  // peer's receives: up to `bufferedBytes` in all (each shared-memory channel's ring where every
  // peer is on this host; 0: nothing, as over TCP, whose socket buffers are not the library's), in
  // messages below `bufferedBelow` bytes (from there a message may be read in one copy and complete
  // only once taken, transports/shm/single_copy.h; 0: no such size). The same on every rank,
  // whatever its buffers. Schedules need no buffering at all unless they check these
  // (TwoShotAllReduce at 2 ranks); the simulator holds a schedule to them where they are set.
  size_t bufferedBytes = 0;
  size_t bufferedBelow = 0;
  // The call's send and receive buffers on this host, counted out of place whatever each rank does
  // (so every rank agrees), outgrow the last-level cache (OutgrowsLastLevelCache,
  // topology/cache_size.h): where a schedule's layout depends on it.
  bool buffersOutgrowCache = false;
};

// The executor copies a send of at most this many bytes (with its tag) when the send's step starts,
// and the payload then travels in the tag's message (src/exec/executor.cc: the extra copy costs less
// than a second message). So another op of the same step may overwrite such a send's source: a
// 2-rank in-place direct all-reduce receives and reduces into the buffer it sends from. A send that
// waits for another op (Op::after) is staged when that op is done instead.
constexpr size_t kStagedSendBytes = 8192;
inline bool SendIsInline(const Op& op, size_t elemSize) {
  return op.kind == OpKind::Send && op.count * elemSize <= kStagedSendBytes;
}
inline bool SendIsStaged(const Op& op, size_t elemSize) { return SendIsInline(op, elemSize) && op.after < 0; }

// The bytes of one rank's send and receive buffers in a call.
struct CallBufferBytes {
  size_t send = 0, recv = 0;
};
inline CallBufferBytes BufferBytes(const CollArgs& a) {
  const size_t c = a.count * a.elemSize, all = c * (size_t)a.nranks;
  switch (a.kind) {
    case CollKind::AllGather: return {c, all};
    case CollKind::ReduceScatter: return {all, c};
    case CollKind::AllToAll: return {all, all};
    default: return {c, c};
  }
}

// Balanced split of `total` into `parts`: part i starts at PartStart(total, parts, i).
inline size_t PartStart(size_t total, size_t parts, size_t i) {
  return (size_t)((unsigned __int128)total * i / parts);
}

// Slices needed so that none exceeds `sliceElems` (at least one).
inline size_t SliceCount(size_t largest, size_t sliceElems) {
  if (sliceElems == 0) sliceElems = 1;
  return largest == 0 ? 1 : (largest + sliceElems - 1) / sliceElems;
}

// The ranks that take part in a power-of-two pattern (recursive doubling/halving): the others fold in.
inline int LargestPowerOfTwoAtMost(int n) {
  int p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}

// Rank arithmetic modulo n, for any sign of a.
inline int RankMod(int a, int n) { return ((a % n) + n) % n; }

}  // namespace tccl
