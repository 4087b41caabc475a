// Double binary tree all-reduce. The message is cut in two halves, each reduced up one binary tree
// and broadcast back down it, in slices, pipelined: a rank passes one slice up and another down
// in the same step, so all levels of both trees work at once.
//
// The two trees are one shape laid over the ranks twice. The shape is the heap order: position p
// has children 2p+1 and 2p+2 (those below N) and parent (p-1)/2; its depth is floor(log2(p+1)),
// at most D = floor(log2 N). Tree 0 puts rank r at position r, tree 1 at position N-1-r. In the
// heap, positions below floor(N/2) are inner and the rest leaves, so the inner ranks of tree 0
// (r < floor(N/2)) are leaves in tree 1 (there r inner means r >= ceil(N/2)): every rank is inner
// in at most one tree, so each rank sends and receives about the message once in all, and no rank
// relays both halves.
//
// Timing. A send's data must be in place when its step starts (the executor stages small sends
// then; src/exec/simulator.cc models it), so a value received in step s is passed on in step s+1.
// Slice k of a tree therefore moves up a node at depth d in step k + D - d (the node receives its
// children's partials one step earlier) and down to it in step k + D + d - 1; it is finished at
// the root in step k + D - 1. Both ends of every message use the same step, so K slices take
// K + 2D - 1 steps, and an inner node's partial needs two scratch slots (slice k is sent while
// slice k+1 is reduced).
//
// Reduce order: a node combines ((own OP first child) OP second child), each child's value being
// its subtree's partial. Fixed for a given N, so results are the same run to run, but it is not
// the canonical order (strict determinism refuses it for floating-point sum, prod and avg).
// Average divides the finished sum by N on every rank, after the broadcast.
#include "algorithms/generators.h"

namespace tccl {

namespace {

// Rank r's place in one of the two trees.
struct HeapRole {
  int depth = 0;
  int parent = -1;            // -1 at the root
  std::vector<int> children;  // 0, 1 or 2, first child first
};

int HeapDepth(int p) {
  int d = 0;
  while (p + 1 >= (2 << d)) ++d;
  return d;
}

HeapRole RoleInTree(int tree, int N, int r) {
  auto rankAt = [&](int p) { return tree == 0 ? p : N - 1 - p; };
  const int p = tree == 0 ? r : N - 1 - r;
  HeapRole role;
  role.depth = HeapDepth(p);
  if (p > 0) role.parent = rankAt((p - 1) / 2);
  for (int c = 2 * p + 1; c <= 2 * p + 2; ++c)
    if (c < N) role.children.push_back(rankAt(c));
  return role;
}

}  // namespace

Schedule DoubleBinaryTreeAllReduce(const CollArgs& a) {
  Schedule s;
  if (NothingToExchange(a, &s)) return s;
  const int N = a.nranks, D = HeapDepth(N - 1);
  // Half h is [PartStart(count, 2, h), PartStart(count, 2, h + 1)), cut into K slices; the slice
  // count follows the larger half so both trees run the same steps.
  const size_t halfStart[3] = {0, PartStart(a.count, 2, 1), a.count};
  const size_t K = SliceCount(halfStart[2] - halfStart[1], a.sliceElems);
  const size_t slot = (halfStart[2] - halfStart[1] + K - 1) / K;
  auto sliceBegin = [&](int h, size_t k) { return halfStart[h] + PartStart(halfStart[h + 1] - halfStart[h], K, k); };
  auto sliceLen = [&](int h, size_t k) { return sliceBegin(h, k + 1) - sliceBegin(h, k); };
  // The slice that step `step` handles at `offset` steps after its start, if any.
  auto sliceAt = [&](long step, long offset, size_t* k) {
    const long v = step - offset;
    if (v < 0 || v >= (long)K) return false;
    *k = (size_t)v;
    return true;
  };
  const HeapRole roles[2] = {RoleInTree(0, N, a.rank), RoleInTree(1, N, a.rank)};
  for (const HeapRole& role : roles)
    if (role.parent >= 0 && !role.children.empty()) s.scratchElems = 4 * slot;
  // An inner rank below the root: slice k's partial of tree h, in one of two slots.
  auto partialSlot = [&](int h, size_t k) { return BufRef{kScratchBuf, (2 * h + k % 2) * slot}; };

  const long steps = (long)K + 2 * D - 1;
  for (long step = 0; step < steps; ++step) {
    // Ops on one connection run in the order listed: every rank lists tree 0 before tree 1, and in
    // one tree and step at most one message goes each way between two ranks, so both ends agree.
    Step st;
    for (int h = 0; h < 2; ++h) {
      const HeapRole& role = roles[h];
      const int d = role.depth;
      size_t k;
      if (!role.children.empty() && sliceAt(step, D - d - 1, &k) && sliceLen(h, k)) {
        const size_t b = sliceBegin(h, k), n = sliceLen(h, k);
        const BufRef acc = role.parent < 0 ? BufRef{kRecvBuf, b} : partialSlot(h, k);
        BufRef partial = {kSendBuf, b};
        int previous = -1;
        for (int child : role.children) {
          Op op = MakeRecvReduce(child, acc, partial, n);
          op.after = previous;  // both reduce into acc, one after the other
          previous = (int)st.ops.size();
          st.ops.push_back(op);
          partial = acc;
        }
      }
      if (role.parent >= 0 && sliceAt(step, D - d, &k) && sliceLen(h, k)) {
        const BufRef partial = role.children.empty() ? BufRef{kSendBuf, sliceBegin(h, k)} : partialSlot(h, k);
        st.ops.push_back(MakeSend(role.parent, partial, sliceLen(h, k)));
      }
      if (role.parent >= 0 && sliceAt(step, D + d - 1, &k) && sliceLen(h, k))
        st.ops.push_back(MakeRecv(role.parent, {kRecvBuf, sliceBegin(h, k)}, sliceLen(h, k)));
      if (sliceAt(step, D + d, &k) && sliceLen(h, k))
        for (int child : role.children) st.ops.push_back(MakeSend(child, {kRecvBuf, sliceBegin(h, k)}, sliceLen(h, k)));
    }
    if (!st.ops.empty()) s.steps.push_back(st);
  }
  if (a.op == tcclAvg) s.steps.push_back({{MakeDivide({kRecvBuf, 0}, a.count)}});
  return s;
}

}  // namespace tccl
