// Ring algorithms: reduce-scatter, all-gather and all-reduce (= reduce-scatter then all-gather).
//
// Each rank sends to rank+1 and receives from rank-1. Data is split into N chunks, and each chunk
// into equal slices so that every step moves a bounded amount (pipelining). Reduction order: the
// partial for a chunk starts at one rank and accumulates rank by rank around the ring, so the
// order depends on the chunk's position (a rotating start): deterministic run to run, but not the
// canonical tree order (see docs/algorithms.md).
#include <algorithm>

#include "algorithms/generators.h"

namespace tccl {

namespace {

// Element range of slice j of chunk c when `total` is split in N chunks of `slices` slices.
struct Range {
  size_t begin, count;
};
Range SliceOf(size_t total, int N, int c, size_t slices, size_t j) {
  size_t cb = PartStart(total, N, c), ce = PartStart(total, N, c + 1);
  size_t b = cb + PartStart(ce - cb, slices, j), e = cb + PartStart(ce - cb, slices, j + 1);
  return {b, e - b};
}

}  // namespace

Schedule RingAllReduce(const CollArgs& a) {
  Schedule s;
  const int N = a.nranks, r = a.rank;
  if (NothingToExchange(a, &s)) return s;
  const int next = RankMod(r + 1, N), prev = RankMod(r - 1, N);
  const size_t slices = SliceCount(PartStart(a.count, N, 1) + 1, a.sliceElems);
  // Reduce-scatter phase: after N-1 steps this rank holds chunk r+1 fully reduced in Recv.
  for (int st = 0; st < N - 1; ++st) {
    int sendChunk = RankMod(r - st, N), recvChunk = RankMod(r - st - 1, N);
    for (size_t j = 0; j < slices; ++j) {
      Range sr = SliceOf(a.count, N, sendChunk, slices, j), rr = SliceOf(a.count, N, recvChunk, slices, j);
      Step step;
      if (sr.count) step.ops.push_back(MakeSend(next, {st == 0 ? kSendBuf : kRecvBuf, sr.begin}, sr.count));
      if (rr.count) step.ops.push_back(MakeRecvReduce(prev, {kRecvBuf, rr.begin}, {kSendBuf, rr.begin}, rr.count));
      if (!step.ops.empty()) s.steps.push_back(step);
    }
  }
  int owned = RankMod(r + 1, N);
  if (a.op == tcclAvg) {
    Range o = SliceOf(a.count, N, owned, 1, 0);
    if (o.count) s.steps.push_back({{MakeDivide({kRecvBuf, o.begin}, o.count)}});
  }
  // All-gather phase.
  for (int st = 0; st < N - 1; ++st) {
    int sendChunk = RankMod(r + 1 - st, N), recvChunk = RankMod(r - st, N);
    for (size_t j = 0; j < slices; ++j) {
      Range sr = SliceOf(a.count, N, sendChunk, slices, j), rr = SliceOf(a.count, N, recvChunk, slices, j);
      Step step;
      if (sr.count) step.ops.push_back(MakeSend(next, {kRecvBuf, sr.begin}, sr.count));
      if (rr.count) step.ops.push_back(MakeRecv(prev, {kRecvBuf, rr.begin}, rr.count));
      if (!step.ops.empty()) s.steps.push_back(step);
    }
  }
  return s;
}

Schedule RingReduceScatter(const CollArgs& a) {
  Schedule s;
  const int N = a.nranks, r = a.rank;
  const size_t rc = a.count;  // elements per rank
  if (N == 1) {
    if (!a.inPlace && rc) s.steps.push_back({{MakeFinalCopy({kSendBuf, 0}, {kRecvBuf, 0}, rc)}});
    return s;
  }
  const int next = RankMod(r + 1, N), prev = RankMod(r - 1, N);
  const size_t slices = SliceCount(rc, a.sliceElems);
  // Partials travel through two scratch slots of one slice each (double buffering).
  const size_t slot = (rc + slices - 1) / slices;
  s.scratchElems = 2 * slot;
  for (size_t j = 0; j < slices; ++j) {
    size_t jb = PartStart(rc, slices, j), jn = PartStart(rc, slices, j + 1) - jb;
    if (jn == 0) continue;
    for (int st = 0; st < N - 1; ++st) {
      int sendChunk = RankMod(r - st - 1, N), recvChunk = RankMod(r - st - 2, N);
      Step step;
      BufRef from = st == 0 ? BufRef{kSendBuf, (size_t)sendChunk * rc + jb}
                            : BufRef{kScratchBuf, (size_t)((st - 1) % 2) * slot};
      step.ops.push_back(MakeSend(next, from, jn));
      BufRef into = st == N - 2 ? BufRef{kRecvBuf, jb} : BufRef{kScratchBuf, (size_t)(st % 2) * slot};
      step.ops.push_back(MakeRecvReduce(prev, into, {kSendBuf, (size_t)recvChunk * rc + jb}, jn));
      s.steps.push_back(step);
    }
  }
  if (a.op == tcclAvg && rc) s.steps.push_back({{MakeDivide({kRecvBuf, 0}, rc)}});
  return s;
}

Schedule RingAllGather(const CollArgs& a) {
  Schedule s;
  const int N = a.nranks, r = a.rank;
  const size_t c = a.count;
  if (NothingToExchange(a, &s)) return s;  // one rank: its block is the whole output
  const int next = RankMod(r + 1, N), prev = RankMod(r - 1, N);
  const size_t slices = SliceCount(c, a.sliceElems);
  for (int st = 0; st < N - 1; ++st) {
    size_t sendChunk = RankMod(r - st, N), recvChunk = RankMod(r - st - 1, N);
    for (size_t j = 0; j < slices; ++j) {
      size_t jb = PartStart(c, slices, j), jn = PartStart(c, slices, j + 1) - jb;
      if (!jn) continue;
      // The first round sends this rank's own block; out of place it goes out of the send buffer
      // and is copied into place in the same step, after the send is posted, rather than copied
      // whole before the first send (which left the ring idle meanwhile).
      const bool own = st == 0 && !a.inPlace;
      // A block received in the last round is not sent on: it is in its final place.
      const BufRef into{kRecvBuf, recvChunk * c + jb};
      Step step{{MakeSend(next, own ? BufRef{kSendBuf, jb} : BufRef{kRecvBuf, sendChunk * c + jb}, jn),
                 st == N - 2 ? MakeFinalRecv(prev, into, jn) : MakeRecv(prev, into, jn)}};
      if (own) step.ops.push_back(MakeFinalCopy({kSendBuf, jb}, {kRecvBuf, sendChunk * c + jb}, jn));
      s.steps.push_back(step);
    }
  }
  return s;
}

}  // namespace tccl
