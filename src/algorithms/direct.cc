// Direct all-reduce for small messages: one step in which every rank sends its whole input to every
// other rank and receives all of theirs into scratch, then one local reduction of the N inputs in
// the canonical tree order (docs/determinism.md). One network hop instead of 2(N-1): what matters
// when latency, not bandwidth, dominates, and when ranks share cores and every hop is a context
// switch.
#include "algorithms/generators.h"

namespace tccl {

Schedule DirectAllReduce(const CollArgs& a) {
  Schedule s;
  const int N = a.nranks, r = a.rank;
  const size_t c = a.count;
  if (c == 0) return s;
  if (N == 1) {
    if (!a.inPlace) s.steps.push_back({{MakeCopy({kSendBuf, 0}, {kRecvBuf, 0}, c)}});
    return s;
  }
  s.scratchElems = c * N;  // slot i holds rank i's input; slot r stays unused
  Step exchange;
  for (int k = 1; k < N; ++k) {
    int to = (r + k) % N, from = (r - k + N) % N;
    exchange.ops.push_back(MakeSend(to, {kSendBuf, 0}, c));
    exchange.ops.push_back(MakeRecv(from, {kScratchBuf, (size_t)from * c}, c));
  }
  s.steps.push_back(exchange);
  Op tree;
  tree.kind = OpKind::TreeReduce;
  tree.src = {kScratchBuf, 0};
  tree.stride = c;
  tree.own = {kSendBuf, 0};
  tree.dst = {kRecvBuf, 0};
  tree.count = c;
  s.steps.push_back({{tree}});
  if (a.op == tcclAvg) s.steps.push_back({{MakeDivide({kRecvBuf, 0}, c)}});
  return s;
}

}  // namespace tccl
