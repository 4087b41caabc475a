// Binomial-tree broadcast: floor(log2 N) hand-overs on the longest path instead of the chain's
// N-1. Relative to the root, rank v receives the whole message from v - 2^j (2^j its highest set
// bit), then sends it to v + 2^i for every 2^i > 2^j with v + 2^i < N; the root sends to
// ceil(log2 N) children. For small messages, where rounds cost more than bytes
// (and more so when ranks share cores: each round is a hand-over through the scheduler); the
// chain pipelines slices and wins for large ones. No reduction.
#include "algorithms/generators.h"

namespace tccl {

Schedule BinomialBroadcast(const CollArgs& a) {
  Schedule s;
  const int N = a.nranks, r = a.rank, v = RankMod(r - a.root, N);
  if (a.count == 0) return s;
  auto real = [&](int rel) { return RankMod(rel + a.root, N); };
  int mask = 1;  // the lowest power of two above v's highest set bit (1 for the root)
  while (mask <= v) mask *= 2;
  if (v != 0) s.steps.push_back({{MakeRecv(real(v - mask / 2), {kRecvBuf, 0}, a.count)}});
  // Children: v + m for m = mask, 2 mask, ... while below N; farthest first, so the biggest
  // subtree starts earliest. Out of place, the root sends from its send buffer and copies it to
  // its own output in the same step, after the sends are posted (not before them). In place the
  // data is in the receive buffer (also when a composite such as the tree all-reduce calls this
  // with inPlace set and its result in the receive buffer).
  const bool rootCopies = v == 0 && !a.inPlace;
  const int source = rootCopies ? kSendBuf : kRecvBuf;
  Step sends;
  for (int m = 1; m < N; m *= 2)
    if (m >= mask && v + m < N) sends.ops.insert(sends.ops.begin(), MakeSend(real(v + m), {source, 0}, a.count));
  if (rootCopies) sends.ops.push_back(MakeFinalCopy({kSendBuf, 0}, {kRecvBuf, 0}, a.count));
  if (!sends.ops.empty()) s.steps.push_back(sends);
  return s;
}

}  // namespace tccl
