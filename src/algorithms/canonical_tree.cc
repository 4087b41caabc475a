// Canonical-tree reduce and all-reduce: the reduction runs along the canonical tree of
// docs/determinism.md itself, one tree node per hop. Node [lo, hi) splits at
// mid = lo + ceil((hi - lo) / 2) and is computed at rank lo, which receives the partial of
// [mid, hi) from rank mid and reduces it into its own partial of [lo, mid). So rank r computes
// the nodes whose left edge it is, innermost first, and sends its last partial to the rank that
// computes its parent. The root of the whole tree is rank 0.
//
// ceil(log2 N) hops of the whole message on the longest path, against direct's N - 1 copies per
// rank: the strict mode's choice for small messages at larger N. Reduce then hands the result
// from rank 0 to the root (one more hop when the root is not 0); all-reduce broadcasts it from
// rank 0 along the binomial tree. No scratch except the accumulator of a non-root reduce rank.
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

// Reduces this rank's subtree into `acc` (a leaf leaves its input where it is) and sends the
// partial up. Returns where this rank's partial is; on rank 0, the finished reduction.
BufRef ReduceUpTheTree(const CollArgs& a, const TreeRole& role, BufRef acc, Schedule* s) {
  BufRef partial = {kSendBuf, 0};
  for (int child : role.children) {
    s->steps.push_back({{MakeRecvReduce(child, acc, partial, a.count)}});
    partial = acc;
  }
  if (role.parent >= 0) s->steps.push_back({{MakeSend(role.parent, partial, a.count)}});
  return partial;
}

}  // namespace

Schedule CanonicalTreeReduce(const CollArgs& a) {
  Schedule s;
  if (a.count == 0) return s;
  const bool root = a.rank == a.root;
  const TreeRole role = RoleOf(a);
  // The receive buffer is only the root's to write: other inner ranks accumulate in scratch.
  BufRef acc = {kRecvBuf, 0};
  if (!root && !role.children.empty()) {
    s.scratchElems = a.count;
    acc = {kScratchBuf, 0};
  }
  const BufRef result = ReduceUpTheTree(a, role, acc, &s);
  if (a.rank == 0) {
    if (root) {
      if (result.buf == kSendBuf && !a.inPlace) s.steps.push_back({{MakeCopy(result, {kRecvBuf, 0}, a.count)}});
      if (a.op == tcclAvg) s.steps.push_back({{MakeDivide({kRecvBuf, 0}, a.count)}});
    } else if (a.op == tcclAvg) {  // divide our own copy, never the user's send buffer
      if (result.buf == kSendBuf) s.steps.push_back({{MakeCopy(result, acc, a.count)}});
      s.steps.push_back({{MakeDivide(acc, a.count)}});
      s.steps.push_back({{MakeSend(a.root, acc, a.count)}});
    } else {
      s.steps.push_back({{MakeSend(a.root, result, a.count)}});
    }
  } else if (root) {
    s.steps.push_back({{MakeRecv(0, {kRecvBuf, 0}, a.count)}});
  }
  return s;
}

Schedule CanonicalTreeAllReduce(const CollArgs& a) {
  Schedule s;
  if (a.count == 0) return s;
  const BufRef result = ReduceUpTheTree(a, RoleOf(a), {kRecvBuf, 0}, &s);
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
