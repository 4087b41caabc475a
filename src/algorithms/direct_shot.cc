// Canonical-order algorithms for large messages (docs/determinism.md). Every reduced element is
// computed in one place by TreeReduce over all N inputs, so the result has the canonical bits
// whatever the size, slicing or transport.
//
//  - direct reduce-scatter: the owner of each chunk receives that chunk's slice from every rank and
//    tree-reduces it; each rank sends and receives (N-1)/N of the data, as ring does.
//  - two-shot all-reduce: direct reduce-scatter over N balanced chunks, then a direct all-gather of
//    the reduced chunks (each owner sends its slice to every rank).
//  - direct reduce: every rank sends each slice to the root, which tree-reduces it.
// Slicing bounds scratch memory to N slices, whatever the message size.
#include <algorithm>

#include "algorithms/generators.h"

namespace tccl {

namespace {

size_t SliceCount(size_t largest, size_t sliceElems) {
  return std::max<size_t>(1, (largest + sliceElems - 1) / std::max<size_t>(1, sliceElems));
}

Op Tree(BufRef slots, size_t stride, BufRef own, BufRef dst, size_t n) {
  Op o;
  o.kind = OpKind::TreeReduce;
  o.src = slots;
  o.stride = stride;
  o.own = own;
  o.dst = dst;
  o.count = n;
  return o;
}

// Where chunk c of the reduction lives: `begin` in the input buffer and `out` in the output.
struct ChunkMap {
  size_t (*begin)(const CollArgs&, int c);
  size_t (*length)(const CollArgs&, int c);
};

size_t BalancedBegin(const CollArgs& a, int c) { return PartStart(a.count, a.nranks, c); }
size_t BalancedLength(const CollArgs& a, int c) {
  return PartStart(a.count, a.nranks, c + 1) - PartStart(a.count, a.nranks, c);
}
size_t BlockBegin(const CollArgs& a, int c) { return (size_t)c * a.count; }
size_t BlockLength(const CollArgs& a, int) { return a.count; }

// Appends the reduce-scatter steps for slice j: exchange, then tree-reduce into `out`.
// Slot i of scratch (stride `slot`) receives rank i's slice of this rank's chunk.
void AppendScatterSlice(Schedule& s, const CollArgs& a, const ChunkMap& m, size_t K, size_t j, size_t slot,
                        BufRef out) {
  const int N = a.nranks, r = a.rank;
  Step exchange;
  for (int k = 1; k < N; ++k) {
    int to = (r + k) % N, from = (r - k + N) % N;
    size_t tb = m.begin(a, to) + PartStart(m.length(a, to), K, j);
    size_t tn = PartStart(m.length(a, to), K, j + 1) - PartStart(m.length(a, to), K, j);
    if (tn) exchange.ops.push_back(MakeSend(to, {kSendBuf, tb}, tn));
    size_t rn = PartStart(m.length(a, r), K, j + 1) - PartStart(m.length(a, r), K, j);
    if (rn) exchange.ops.push_back(MakeRecv(from, {kScratchBuf, (size_t)from * slot}, rn));
  }
  if (!exchange.ops.empty()) s.steps.push_back(exchange);
  size_t ob = PartStart(m.length(a, r), K, j), on = PartStart(m.length(a, r), K, j + 1) - ob;
  if (!on) return;
  s.steps.push_back({{Tree({kScratchBuf, 0}, slot, {kSendBuf, m.begin(a, r) + ob}, {out.buf, out.offset + ob}, on)}});
  if (a.op == tcclAvg) s.steps.push_back({{MakeDivide({out.buf, out.offset + ob}, on)}});
}

size_t LargestChunk(const CollArgs& a, const ChunkMap& m) {
  size_t largest = 0;
  for (int c = 0; c < a.nranks; ++c) largest = std::max(largest, m.length(a, c));
  return largest;
}

}  // namespace

Schedule DirectReduceScatter(const CollArgs& a) {
  Schedule s;
  const size_t rc = a.count;
  if (a.nranks == 1) {
    if (!a.inPlace && rc) s.steps.push_back({{MakeCopy({kSendBuf, 0}, {kRecvBuf, 0}, rc)}});
    return s;
  }
  if (rc == 0) return s;
  ChunkMap m{&BlockBegin, &BlockLength};
  const size_t K = SliceCount(rc, a.sliceElems), slot = (rc + K - 1) / K;
  s.scratchElems = slot * a.nranks;
  for (size_t j = 0; j < K; ++j) AppendScatterSlice(s, a, m, K, j, slot, {kRecvBuf, 0});
  return s;
}

Schedule TwoShotAllReduce(const CollArgs& a) {
  Schedule s;
  const int N = a.nranks, r = a.rank;
  if (N == 1) {
    if (!a.inPlace && a.count) s.steps.push_back({{MakeCopy({kSendBuf, 0}, {kRecvBuf, 0}, a.count)}});
    return s;
  }
  if (a.count == 0) return s;
  ChunkMap m{&BalancedBegin, &BalancedLength};
  const size_t largest = LargestChunk(a, m);
  const size_t K = SliceCount(largest, a.sliceElems), slot = (largest + K - 1) / K;
  s.scratchElems = slot * N;
  // In place, the reduced slice overwrites this rank's own input, which no peer needs any more
  // (peers only receive other chunks of it, sent in the exchange step before).
  for (size_t j = 0; j < K; ++j) AppendScatterSlice(s, a, m, K, j, slot, {kRecvBuf, m.begin(a, r)});
  // All-gather: every owner sends each reduced slice to every rank.
  for (size_t j = 0; j < K; ++j) {
    Step gather;
    for (int k = 1; k < N; ++k) {
      int to = (r + k) % N, from = (r - k + N) % N;
      size_t ob = PartStart(m.length(a, r), K, j), on = PartStart(m.length(a, r), K, j + 1) - ob;
      if (on) gather.ops.push_back(MakeSend(to, {kRecvBuf, m.begin(a, r) + ob}, on));
      size_t fb = PartStart(m.length(a, from), K, j), fn = PartStart(m.length(a, from), K, j + 1) - fb;
      if (fn) gather.ops.push_back(MakeRecv(from, {kRecvBuf, m.begin(a, from) + fb}, fn));
    }
    if (!gather.ops.empty()) s.steps.push_back(gather);
  }
  return s;
}

Schedule DirectReduce(const CollArgs& a) {
  Schedule s;
  const int N = a.nranks, r = a.rank;
  if (a.count == 0) return s;
  if (N == 1) {
    if (!a.inPlace) s.steps.push_back({{MakeCopy({kSendBuf, 0}, {kRecvBuf, 0}, a.count)}});
    return s;
  }
  const size_t K = SliceCount(a.count, a.sliceElems), slot = (a.count + K - 1) / K;
  if (r == a.root) s.scratchElems = slot * N;
  for (size_t j = 0; j < K; ++j) {
    size_t b = PartStart(a.count, K, j), n = PartStart(a.count, K, j + 1) - b;
    if (!n) continue;
    if (r != a.root) {
      s.steps.push_back({{MakeSend(a.root, {kSendBuf, b}, n)}});
      continue;
    }
    Step gather;
    for (int k = 1; k < N; ++k) {
      int from = (r + k) % N;
      gather.ops.push_back(MakeRecv(from, {kScratchBuf, (size_t)from * slot}, n));
    }
    s.steps.push_back(gather);
    s.steps.push_back({{Tree({kScratchBuf, 0}, slot, {kSendBuf, b}, {kRecvBuf, b}, n)}});
    if (a.op == tcclAvg) s.steps.push_back({{MakeDivide({kRecvBuf, b}, n)}});
  }
  return s;
}

}  // namespace tccl
