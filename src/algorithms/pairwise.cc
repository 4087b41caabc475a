// Pairwise-exchange all-to-all: in step k (1..N-1) rank r sends its block for r+k and receives
// the block from r-k, so every rank talks to exactly one peer in each direction per step.
#include <algorithm>

#include "algorithms/generators.h"

namespace tccl {

Schedule PairwiseAllToAll(const CollArgs& a) {
  Schedule s;
  const int N = a.nranks, r = a.rank;
  const size_t c = a.count;
  if (c == 0) return s;
  const int source = AllToAllSource(a, &s);
  const size_t K = SliceCount(c, a.sliceElems);
  for (int k = 1; k < N; ++k) {
    int to = (r + k) % N, from = (r - k + N) % N;
    for (size_t t = 0; t < K; ++t) {
      size_t b = PartStart(c, K, t), n = PartStart(c, K, t + 1) - b;
      if (n)
        s.steps.push_back({{MakeSend(to, {source, to * c + b}, n), MakeRecv(from, {kRecvBuf, from * c + b}, n)}});
    }
  }
  return s;
}

}  // namespace tccl
