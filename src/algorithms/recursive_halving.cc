// Recursive halving (Rabenseifner): reduce-scatter by halving, then (for all-reduce) all-gather by
// doubling. P = the largest power of two <= N takes part; each of the N - P extra ranks first
// folds its whole input into rank r - P and gets its result back at the end, as in
// recursive_doubling.cc.
//
// Halving: at distance d = P/2, P/4, ..., 1 rank r and its partner r XOR d split the blocks they
// still hold; r keeps the half whose block index has r's bit d, sends the other half and reduces
// the partner's copy of the kept half into its own (one receive-and-reduce, no scratch: the sent
// and the kept halves never overlap). After log2 P levels rank r holds block r fully reduced.
// Doubling reverses it: at d = 1, 2, ..., P/2 partners swap what they hold.
//
// Each rank sends and receives 2(P-1)/P of the data, as ring does, in 2 log2 P rounds instead of
// 2(N-1): between rdouble (few rounds, whole message each) and ring (many rounds). The reduction
// is a butterfly, not the canonical tree: deterministic run to run (level `run`), not strict.
#include "algorithms/generators.h"

namespace tccl {

namespace {

// A contiguous run of elements: [start, start + count).
struct Run {
  size_t start, count;
};

// The element runs that hold the blocks of virtual ranks [vlo, vhi). For all-reduce a block is
// one of P balanced parts; for reduce-scatter virtual rank v holds chunk v and chunk v + P (when
// v + P < N), so its blocks are two runs.
class BlockLayout {
 public:
  BlockLayout(const CollArgs& a, int P) : a_(a), P_(P) {}

  std::vector<Run> Runs(int vlo, int vhi) const {
    if (a_.kind == CollKind::AllReduce)
      return {{PartStart(a_.count, P_, vlo), PartStart(a_.count, P_, vhi) - PartStart(a_.count, P_, vlo)}};
    std::vector<Run> runs = {{(size_t)vlo * a_.count, (size_t)(vhi - vlo) * a_.count}};
    const int xlo = vlo + P_, xhi = std::min(vhi + P_, a_.nranks);
    if (xlo < xhi) runs.push_back({(size_t)xlo * a_.count, (size_t)(xhi - xlo) * a_.count});
    return runs;
  }

 private:
  const CollArgs& a_;
  int P_;
};

// One halving level: send `give` from `from`, and reduce the partner's `keep` into `to`, reading
// this rank's own contribution from `from`.
Step HalvingLevel(int peer, const std::vector<Run>& give, const std::vector<Run>& keep, int from, int to) {
  Step st;
  for (const Run& g : give)
    if (g.count) st.ops.push_back(MakeSend(peer, {from, g.start}, g.count));
  for (const Run& k : keep)
    if (k.count) st.ops.push_back(MakeRecvReduce(peer, {to, k.start}, {from, k.start}, k.count));
  return st;
}

}  // namespace

Schedule RecursiveHalvingAllReduce(const CollArgs& a) {
  Schedule s;
  const int N = a.nranks, r = a.rank;
  if (a.count == 0) return s;
  if (!a.inPlace) s.steps.push_back({{MakeCopy({kSendBuf, 0}, {kRecvBuf, 0}, a.count)}});
  if (N == 1) return s;
  const int P = LargestPowerOfTwoAtMost(N);
  if (r >= P) {  // an extra rank: fold in, wait for the result
    s.steps.push_back({{MakeSend(r - P, {kRecvBuf, 0}, a.count)}});
    s.steps.push_back({{MakeRecv(r - P, {kRecvBuf, 0}, a.count)}});
    return s;
  }
  if (r + P < N) s.steps.push_back({{MakeRecvReduce(r + P, {kRecvBuf, 0}, {kRecvBuf, 0}, a.count)}});
  const BlockLayout blocks(a, P);
  int lo = 0, hi = P;  // the virtual ranks whose blocks this rank still holds
  for (int d = P / 2; d >= 1; d /= 2) {
    const int mid = lo + d;
    const bool upper = (r & d) != 0;
    const std::vector<Run> give = upper ? blocks.Runs(lo, mid) : blocks.Runs(mid, hi);
    const std::vector<Run> keep = upper ? blocks.Runs(mid, hi) : blocks.Runs(lo, mid);
    s.steps.push_back(HalvingLevel(r ^ d, give, keep, kRecvBuf, kRecvBuf));
    if (upper) lo = mid; else hi = mid;
  }
  if (a.op == tcclAvg) {
    const Run own = blocks.Runs(r, r + 1)[0];
    if (own.count) s.steps.push_back({{MakeDivide({kRecvBuf, own.start}, own.count)}});
  }
  for (int d = 1; d < P; d *= 2) {
    const int mine = r & ~(d - 1), theirs = (r ^ d) & ~(d - 1);
    const Run out = blocks.Runs(mine, mine + d)[0], in = blocks.Runs(theirs, theirs + d)[0];
    Step st;
    if (out.count) st.ops.push_back(MakeSend(r ^ d, {kRecvBuf, out.start}, out.count));
    if (in.count) st.ops.push_back(MakeRecv(r ^ d, {kRecvBuf, in.start}, in.count));
    s.steps.push_back(st);
  }
  if (r + P < N) s.steps.push_back({{MakeSend(r + P, {kRecvBuf, 0}, a.count)}});
  return s;
}

// Reduce-scatter: the N chunks are held as P virtual blocks (BlockLayout). The first level reads
// this rank's input straight from the send buffer and reduces into scratch (the send buffer is
// not ours to write); later levels work in scratch, and the last level reduces chunk r straight
// into the receive buffer. Scratch is N * count elements, addressed like the send buffer.
Schedule RecursiveHalvingReduceScatter(const CollArgs& a) {
  Schedule s;
  const int N = a.nranks, r = a.rank;
  const size_t total = (size_t)N * a.count;
  if (a.count == 0) return s;
  const BufRef ownChunk = {kSendBuf, (size_t)r * a.count};
  if (N == 1) {
    if (!a.inPlace) s.steps.push_back({{MakeCopy(ownChunk, {kRecvBuf, 0}, a.count)}});
    return s;
  }
  const int P = LargestPowerOfTwoAtMost(N);
  if (r >= P) {  // an extra rank: hand over the whole input, get chunk r back
    s.steps.push_back({{MakeSend(r - P, {kSendBuf, 0}, total)}});
    s.steps.push_back({{MakeRecv(r - P, {kRecvBuf, 0}, a.count)}});
    if (a.op == tcclAvg) s.steps.push_back({{MakeDivide({kRecvBuf, 0}, a.count)}});
    return s;
  }
  s.scratchElems = total;
  int from = kSendBuf;
  if (r + P < N) {
    s.steps.push_back({{MakeRecvReduce(r + P, {kScratchBuf, 0}, {kSendBuf, 0}, total)}});
    from = kScratchBuf;
  }
  const BlockLayout blocks(a, P);
  int lo = 0, hi = P;
  for (int d = P / 2; d >= 1; d /= 2) {
    const int mid = lo + d;
    const bool upper = (r & d) != 0;
    const std::vector<Run> give = upper ? blocks.Runs(lo, mid) : blocks.Runs(mid, hi);
    const std::vector<Run> keep = upper ? blocks.Runs(mid, hi) : blocks.Runs(lo, mid);
    Step st = HalvingLevel(r ^ d, give, keep, from, kScratchBuf);
    if (d == 1) {  // the last level: chunk r lands in the receive buffer
      for (Op& op : st.ops)
        if (op.kind == OpKind::RecvReduce && op.dst.offset == ownChunk.offset) op.dst = {kRecvBuf, 0};
    }
    s.steps.push_back(st);
    from = kScratchBuf;
    if (upper) lo = mid; else hi = mid;
  }
  if (a.op == tcclAvg) s.steps.push_back({{MakeDivide({kRecvBuf, 0}, a.count)}});
  if (r + P < N) s.steps.push_back({{MakeSend(r + P, {kScratchBuf, (size_t)(r + P) * a.count}, a.count)}});
  return s;
}

}  // namespace tccl
