// Canonical-tree reduce and all-reduce: the reduction runs along the canonical tree of
// docs/determinism.md itself, one tree node per hop. Node [lo, hi) splits at
// mid = lo + ceil((hi - lo) / 2) and is computed at rank lo, which receives the partial of
// [mid, hi) from rank mid and reduces it into its own partial of [lo, mid). So rank r computes
// the nodes whose left edge it is, innermost first, and sends its last partial to the rank that
// computes its parent. The root of the whole tree is rank 0.
//
// Pipelined in slices: in step j a rank reduces slice j of every child's partial into its own
// (the children one after another, innermost first, as the canonical order has it) and sends
// slice j-1, finished in the step before, to its parent. So the levels of the tree work at once
// and the longest path costs about one pass over the message plus one slice per level, instead
// of one pass per level; and a rank that only passes partials on keeps them in two slices of
// scratch, in cache, instead of a buffer of the whole message. Each element still meets its
// operands in the same order, whatever the slicing, so the bits do not change.
//
// ceil(log2 N) hops on the longest path, against direct's N - 1 copies per rank: the strict
// mode's choice for small messages at larger N and, pipelined, for large ones. When the root of a
// reduce is not rank 0, rank 0 streams the result to it as it finishes it, a slice a step, as it
// would to a parent (one slice more on the longest path, not one whole message more); all-reduce
// broadcasts the result from rank 0 along the binomial tree.
#include <algorithm>

#include "algorithms/generators.h"

namespace tccl {

namespace {

// The ranks whose partials rank r receives, in the order it reduces them, and the rank it sends
// its own partial to (-1 for rank 0).
struct TreeRole {
  std::vector<int> children;
  int parent = -1;
};

void VisitNode(int lo, int hi, int r, TreeRole* role) {
  if (hi - lo == 1) return;
  const int mid = lo + (hi - lo + 1) / 2;
  VisitNode(lo, mid, r, role);
  VisitNode(mid, hi, r, role);
  if (r == lo) role->children.push_back(mid);  // post-order: the inner nodes of lo come first
  if (r == mid) role->parent = lo;
}

TreeRole RoleOf(const CollArgs& a) {
  TreeRole role;
  VisitNode(0, a.nranks, a.rank, &role);
  return role;
}

// Where this rank accumulates slice j of its partial: at the slice's own place in a buffer of the
// whole message (the result, at rank 0 when it is the root), or in one of two slots that alternate
// (a rank that passes its slices on: slice j's slot is rewritten in step j+2, after its send in
// step j+1).
struct Accumulator {
  BufRef base;
  size_t slot = 0;  // elements per slot; 0: the whole message at `base`
  BufRef At(size_t j, size_t begin) const {
    return slot ? BufRef{base.buf, base.offset + (j % 2) * slot} : BufRef{base.buf, base.offset + begin};
  }
};

// Slices of the pipeline: the usual pipelining slice, but no smaller than the size from which a
// message can be read in one copy where every rank can map every other's memory, so that a leaf's
// slices are still read straight from its buffer there (single_copy.h); the same on every rank.
size_t TreeSlices(const CollArgs& a) {
  const size_t singleCopyElems = (a.sharedScratchBytes + a.elemSize - 1) / a.elemSize;
  return SliceCount(a.count, std::max(a.sliceElems, singleCopyElems));
}

// Reduces this rank's subtree into `acc`, slice by slice, and sends each slice's partial up in the
// step after the one that finished it (a leaf sends its input, a slice per step). Returns
// where this rank's whole partial is when it is kept whole (a leaf's input; rank 0's result when
// rank 0 sends it nowhere).
BufRef ReduceUpTheTree(const CollArgs& a, const TreeRole& role, const Accumulator& acc, Schedule* s) {
  const size_t K = TreeSlices(a);
  auto begin = [&](size_t j) { return PartStart(a.count, K, j); };
  auto len = [&](size_t j) { return begin(j + 1) - begin(j); };
  if (role.children.empty()) {
    // One slice per step: every pass of the executor visits each op of its step, so all K sends in
    // one step would cost K per pass for nothing (when it scanned a step's earlier ops for each op,
    // K^2: 256 MiB, 1024 slices, 2-3x slower in all).
    if (role.parent >= 0)
      for (size_t j = 0; j < K; ++j) s->steps.push_back({{MakeSend(role.parent, {kSendBuf, begin(j)}, len(j))}});
    return {kSendBuf, 0};
  }
  for (size_t j = 0; j <= K; ++j) {
    Step step;
    if (j < K) {
      BufRef partial = {kSendBuf, begin(j)};
      for (int child : role.children) {
        Op o = MakeRecvReduce(child, acc.At(j, begin(j)), partial, len(j));
        if (partial.buf != kSendBuf) o.after = (int)step.ops.size() - 1;  // onto the previous child's result
        step.ops.push_back(o);
        partial = acc.At(j, begin(j));
      }
    }
    if (j > 0 && role.parent >= 0) step.ops.push_back(MakeSend(role.parent, acc.At(j - 1, begin(j - 1)), len(j - 1)));
    if (!step.ops.empty()) s->steps.push_back(step);
  }
  return acc.base;
}

}  // namespace

Schedule CanonicalTreeReduce(const CollArgs& a) {
  Schedule s;
  if (a.count == 0) return s;
  const bool handOver = a.root != 0;
  TreeRole role = RoleOf(a);
  if (a.rank == 0 && handOver) role.parent = a.root;  // rank 0 sends the finished slices on to the root
  // A receive buffer holds nothing but the result: only rank 0 accumulates there, and only when it
  // is the root. Every other rank with children accumulates in two alternating slots of scratch.
  Accumulator acc{{kRecvBuf, 0}};
  const size_t K = TreeSlices(a);
  if ((a.rank != 0 || handOver) && !role.children.empty()) {
    acc.base = {kScratchBuf, 0};
    acc.slot = (a.count + K - 1) / K;
    s.scratchElems = acc.slot * std::min<size_t>(2, K);
  }
  const BufRef result = ReduceUpTheTree(a, role, acc, &s);
  if (!handOver) {
    if (a.rank == 0) {
      if (result.buf == kSendBuf && !a.inPlace) s.steps.push_back({{MakeCopy(result, {kRecvBuf, 0}, a.count)}});
      if (a.op == tcclAvg) s.steps.push_back({{MakeDivide({kRecvBuf, 0}, a.count)}});
    }
    return s;
  }
  if (a.rank == a.root) {
    // Rank 0 sends slice j in its step j+1; the root takes it in its own step j+1, by when it has
    // sent its own partial of slice j (step j+1 at the latest) and read its input there (step j),
    // so an in-place root's input is not overwritten before it is used.
    for (size_t j = 0; j < K; ++j) {
      const size_t b = PartStart(a.count, K, j), n = PartStart(a.count, K, j + 1) - b;
      while (s.steps.size() <= j + 1) s.steps.push_back({});
      s.steps[j + 1].ops.push_back(MakeRecv(0, {kRecvBuf, b}, n));
    }
    if (a.op == tcclAvg) s.steps.push_back({{MakeDivide({kRecvBuf, 0}, a.count)}});
  }
  return s;
}

Schedule CanonicalTreeAllReduce(const CollArgs& a) {
  Schedule s;
  if (a.count == 0) return s;
  const BufRef result = ReduceUpTheTree(a, RoleOf(a), Accumulator{{kRecvBuf, 0}}, &s);
  if (a.rank == 0) {
    if (result.buf == kSendBuf && !a.inPlace) s.steps.push_back({{MakeCopy(result, {kRecvBuf, 0}, a.count)}});
    if (a.op == tcclAvg) s.steps.push_back({{MakeDivide({kRecvBuf, 0}, a.count)}});
  }
  CollArgs down = a;
  down.kind = CollKind::Broadcast;
  down.root = 0;
  down.inPlace = true;  // the result is in every rank's receive buffer, or will be
  const Schedule bcast = BinomialBroadcast(down);
  s.steps.insert(s.steps.end(), bcast.steps.begin(), bcast.steps.end());
  return s;
}

}  // namespace tccl
