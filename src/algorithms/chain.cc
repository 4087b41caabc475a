// Pipelined chain broadcast and reduce. Ranks form a chain in ring order starting at the root;
// data is cut into slices, and in each step a rank receives slice t while forwarding slice t-1, so
// all links are busy at once after N-1 steps.
//
// Reduce order: the partial starts at the rank farthest from the root (root-1) and accumulates
// towards it: (((x[root-1] + x[root-2]) + ...) + x[root]) with each rank's own value on the left.
#include <algorithm>

#include "algorithms/generators.h"

namespace tccl {

Schedule ChainBroadcast(const CollArgs& a) {
  Schedule s;
  const int N = a.nranks, r = a.rank, pos = RankMod(r - a.root, N);
  const size_t K = SliceCount(a.count, a.sliceElems);
  auto slice = [&](size_t t) {
    size_t b = PartStart(a.count, K, t);
    return std::pair<size_t, size_t>(b, PartStart(a.count, K, t + 1) - b);
  };
  if (NothingToExchange(a, &s)) return s;
  if (pos == 0) {
    // Out of place, the root copies slice t to its own output in the step that sends it: the copy
    // runs after the send is posted, reads the slice from cache, and overlaps with the next rank
    // (copying the whole message first kept the chain idle for that long: 2 ranks, 256 MiB,
    // 33 ms out of place against 15 in place).
    for (size_t t = 0; t < K; ++t) {
      auto [b, n] = slice(t);
      if (!n) continue;
      Step step{{MakeSend(RankMod(r + 1, N), {kSendBuf, b}, n)}};
      if (!a.inPlace) step.ops.push_back(MakeFinalCopy({kSendBuf, b}, {kRecvBuf, b}, n));
      s.steps.push_back(step);
    }
    return s;
  }
  const bool last = pos == N - 1;
  for (size_t t = 0; t <= K; ++t) {
    Step step;
    if (t < K) {
      auto [b, n] = slice(t);
      // The chain's last rank sends nothing on: its slices are in their final place.
      if (n) step.ops.push_back(last ? MakeFinalRecv(RankMod(r - 1, N), {kRecvBuf, b}, n)
                                     : MakeRecv(RankMod(r - 1, N), {kRecvBuf, b}, n));
    }
    if (t >= 1 && !last) {
      auto [b, n] = slice(t - 1);
      if (n) step.ops.push_back(MakeSend(RankMod(r + 1, N), {kRecvBuf, b}, n));
    }
    if (!step.ops.empty()) s.steps.push_back(step);
  }
  return s;
}

Schedule ChainReduce(const CollArgs& a) {
  Schedule s;
  const int N = a.nranks, r = a.rank, dist = RankMod(r - a.root, N);
  if (NothingToExchange(a, &s)) return s;
  const size_t K = SliceCount(a.count, a.sliceElems);
  const size_t slot = (a.count + K - 1) / K;
  const int toward = RankMod(r - 1, N), from = RankMod(r + 1, N);
  auto begin = [&](size_t t) { return PartStart(a.count, K, t); };
  auto len = [&](size_t t) { return PartStart(a.count, K, t + 1) - PartStart(a.count, K, t); };
  if (dist == N - 1) {  // the far end only sends its own data
    for (size_t t = 0; t < K; ++t)
      if (len(t)) s.steps.push_back({{MakeSend(toward, {kSendBuf, begin(t)}, len(t))}});
    return s;
  }
  if (dist == 0) {  // the root reduces into its receive buffer
    for (size_t t = 0; t < K; ++t)
      if (len(t))
        s.steps.push_back({{MakeRecvReduce(from, {kRecvBuf, begin(t)}, {kSendBuf, begin(t)}, len(t))}});
    if (a.op == tcclAvg) s.steps.push_back({{MakeDivide({kRecvBuf, 0}, a.count)}});
    return s;
  }
  // Middle of the chain: reduce slice t into a scratch slot while forwarding slice t-1.
  s.scratchElems = 2 * slot;
  for (size_t t = 0; t <= K; ++t) {
    Step step;
    if (t < K && len(t))
      step.ops.push_back(MakeRecvReduce(from, {kScratchBuf, (t % 2) * slot}, {kSendBuf, begin(t)}, len(t)));
    if (t >= 1 && len(t - 1))
      step.ops.push_back(MakeSend(toward, {kScratchBuf, ((t - 1) % 2) * slot}, len(t - 1)));
    if (!step.ops.empty()) s.steps.push_back(step);
  }
  return s;
}

}  // namespace tccl
