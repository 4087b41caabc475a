// Recursive doubling all-reduce: log2(P) rounds in which partners r and r XOR 2^k exchange their
// whole partial and both reduce it (P = the largest power of two <= N). The N - P extra ranks
// first fold their input into rank r - P and get the result back at the end. Fewer rounds than
// ring (log2 P + 2 vs 2(N-1)) and fewer bytes per rank than direct for N > 4: for small and
// medium messages.
//
// Reduce order: a butterfly — at level k each element is (own partial) OP (partner's partial);
// partners compute a OP b and b OP a, which are the same bits because every kernel operation is
// commutative bit for bit (docs/kernels.md: canonical NaN, +0 > -0). The tree pairs ranks by XOR
// distance, not the canonical tree, so strict mode does not use it for floating-point sum, prod
// and avg; it is deterministic run to run (level `run`).
#include "algorithms/generators.h"

namespace tccl {

Schedule RecursiveDoublingAllReduce(const CollArgs& a) {
  Schedule s;
  const int N = a.nranks, r = a.rank;
  if (a.count == 0) return s;
  if (!a.inPlace) s.steps.push_back({{MakeCopy({kSendBuf, 0}, {kRecvBuf, 0}, a.count)}});
  if (N == 1) return s;
  const int P = LargestPowerOfTwoAtMost(N);
  // Each level: send the partial while receiving the partner's into scratch (both in one step, so
  // neither waits for the other's buffer space), then reduce it in.
  s.scratchElems = a.count;
  auto exchange = [&](int peer) {
    s.steps.push_back({{MakeSend(peer, {kRecvBuf, 0}, a.count), MakeRecv(peer, {kScratchBuf, 0}, a.count)}});
    s.steps.push_back({{MakeReduce({kRecvBuf, 0}, {kRecvBuf, 0}, {kScratchBuf, 0}, a.count)}});
  };
  if (r >= P) {  // an extra rank: fold in, wait for the result
    s.steps.push_back({{MakeSend(r - P, {kRecvBuf, 0}, a.count)}});
    s.steps.push_back({{MakeRecv(r - P, {kRecvBuf, 0}, a.count)}});
  } else {
    if (r + P < N) s.steps.push_back({{MakeRecvReduce(r + P, {kRecvBuf, 0}, {kRecvBuf, 0}, a.count)}});
    for (int d = 1; d < P; d *= 2) exchange(r ^ d);
    if (r + P < N) s.steps.push_back({{MakeSend(r + P, {kRecvBuf, 0}, a.count)}});
  }
  if (a.op == tcclAvg) s.steps.push_back({{MakeDivide({kRecvBuf, 0}, a.count)}});
  return s;
}

}  // namespace tccl
