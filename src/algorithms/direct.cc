// Direct algorithms: one step in which every rank exchanges with every other. All-reduce, for
// small messages: every rank sends its whole input to every other rank and receives all of theirs
// into scratch, then one local reduction of the N inputs in the canonical tree order
// (docs/determinism.md). One network hop instead of 2(N-1): what matters
// when latency, not bandwidth, dominates, and when ranks share cores and every hop is a context
// switch.
#include <algorithm>

#include "algorithms/generators.h"

namespace tccl {

namespace {

// The pieces a 2-rank direct all-reduce moves as separate messages: 1 MiB, in whole slices of the
// call (CollArgs::sliceElems); a message up to this size is one message. Above the single-copy
// threshold (256 KiB by default, TCCL_SHM_SINGLE_COPY_BYTES), so buffers peers can map are still
// read in one copy. Each piece is a step, and each step waits for the peer: alternated on 2 cores
// with tcclMemAlloc buffers, 1 MiB pieces ran 2 MiB out of place at 190 against 227-235 us with
// one message or 256 KiB pieces, and 16 MiB in place at 4.0 against 6.0 ms for both
// (perf/results/host-2026-11-27/two_rank_direct_in_pieces_ab.txt). The same on every rank: it
// depends on the count, the element size and the slice, never on this rank's buffers.
size_t TwoRankPieceElems(const CollArgs& a) {
  constexpr size_t kMinPieceBytes = 1 << 20;
  const size_t slice = std::max<size_t>(1, a.sliceElems);
  const size_t minElems = (kMinPieceBytes + a.elemSize - 1) / a.elemSize;
  return (minElems + slice - 1) / slice * slice;
}

// 2 ranks: the canonical tree of two inputs is one reduction, and both ranks compute it as their
// peer's message arrives: no tree scratch and no second hand-over (2 ranks, 8 B: 0.29-0.47 ->
// 0.25-0.43 us). Rank 1 computes in1 OP in0, the same bits: sum and prod commute bit for bit,
// max and min are exact (as in direct_shot.cc).
// Larger messages go in pieces (TwoRankPieceElems), one step each. In place, a piece's reduction
// may not overwrite the buffer before the piece has left it (the peer may be reading it in one
// copy), so the peer's piece is received into one of two scratch slots and reduced into place in
// the next step, once this rank's send of the piece has completed; a staged send (schedule.h) has
// left at once. Before, an in-place message was received whole into scratch and reduced after: a
// second pass over the whole message through memory and a scratch of twice the message (2 ranks,
// tcclMemAlloc buffers, in place, alternated: 256 MiB 137 ms then, 72 now; docs/performance.md,
// "The 2-rank direct all-reduce in place, in pieces").
Schedule TwoRankDirectAllReduce(const CollArgs& a) {
  Schedule s;
  const int peer = 1 - a.rank;
  const size_t c = a.count, piece = TwoRankPieceElems(a);
  const size_t K = SliceCount(c, piece);
  const bool viaSlots = a.inPlace && !(K == 1 && SendIsStaged(MakeSend(peer, {kSendBuf, 0}, c), a.elemSize));
  const size_t slotElems = (c + K - 1) / K;
  if (viaSlots) s.scratchElems = std::min<size_t>(K, 2) * slotElems;
  auto slot = [&](size_t j) { return BufRef{kScratchBuf, (j % 2) * slotElems}; };
  auto begin = [&](size_t j) { return PartStart(c, K, j); };
  for (size_t j = 0; j <= K; ++j) {
    Step step;
    if (j < K) {
      const size_t b = begin(j), n = begin(j + 1) - b;
      step.ops.push_back(MakeSend(peer, {kSendBuf, b}, n));
      if (viaSlots) {
        step.ops.push_back(MakeRecv(peer, slot(j), n));
      } else {
        Op reduce = MakeRecvReduce(peer, {kRecvBuf, b}, {kSendBuf, b}, n);
        // Out of place (or in place only for one staged message, far below the streaming line)
        // the output is not read again but by avg's divide, so where the buffers outgrow the
        // cache it is stored past it, without reading each line first.
        reduce.finalDst = FinalReduceOutput(a);
        step.ops.push_back(reduce);
      }
    }
    if (viaSlots && j > 0) {
      const size_t b = begin(j - 1), n = begin(j) - b;
      step.ops.push_back(MakeReduce({kRecvBuf, b}, {kRecvBuf, b}, slot(j - 1), n));
    }
    if (!step.ops.empty()) s.steps.push_back(step);
  }
  if (a.op == tcclAvg) s.steps.push_back({{MakeDivide({kRecvBuf, 0}, c)}});
  return s;
}

}  // namespace

Schedule DirectAllReduce(const CollArgs& a) {
  Schedule s;
  const int N = a.nranks, r = a.rank;
  const size_t c = a.count;
  if (NothingToExchange(a, &s)) return s;
  if (N == 2) return TwoRankDirectAllReduce(a);
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

// One step with every other rank: send `blockOf(to)` to each and receive each one's block into
// its place in the receive buffer (ranks paired r+k / r-k, as in pairwise.cc).
template <typename BlockFn>
static Step ExchangeWithAll(const CollArgs& a, BlockFn blockOf) {
  const int N = a.nranks, r = a.rank;
  const size_t c = a.count;
  Step step;
  for (int k = 1; k < N; ++k) {
    const int to = (r + k) % N, from = (r - k + N) % N;
    step.ops.push_back(MakeSend(to, blockOf(to), c));
    step.ops.push_back(MakeFinalRecv(from, {kRecvBuf, (size_t)from * c}, c));
  }
  return step;
}

// Direct all-gather: one step in which every rank sends its block to every other rank and
// receives theirs into place. One hand-over instead of the ring's N-1 (small messages; the same
// bytes per rank as the ring, but N-1 copies out of one block at once).
// Out of place, the own block is copied in the same step: after the step's messages are posted,
// so that peers reading this rank's block in one copy work meanwhile.
Schedule DirectAllGather(const CollArgs& a) {
  Schedule s;
  const size_t c = a.count;
  if (c == 0) return s;
  Step step = ExchangeWithAll(a, [](int) { return BufRef{kSendBuf, 0}; });
  if (!a.inPlace) step.ops.push_back(MakeFinalCopy({kSendBuf, 0}, {kRecvBuf, (size_t)a.rank * c}, c));
  if (!step.ops.empty()) s.steps.push_back(step);
  return s;
}

// Direct broadcast: the root sends the whole message to every other rank in one step. Through
// channels the root copies it N-1 times (the chain is better); read in one copy (single_copy.h)
// the root copies nothing and the N-1 receivers read its buffer at once.
Schedule DirectBroadcast(const CollArgs& a) {
  Schedule s;
  const int N = a.nranks, r = a.rank;
  if (a.count == 0) return s;
  if (r != a.root) {
    s.steps.push_back({{MakeFinalRecv(a.root, {kRecvBuf, 0}, a.count)}});
    return s;
  }
  Step step;
  if (!a.inPlace) step.ops.push_back(MakeFinalCopy({kSendBuf, 0}, {kRecvBuf, 0}, a.count));
  for (int k = 1; k < N; ++k) step.ops.push_back(MakeSend((r + k) % N, {kSendBuf, 0}, a.count));
  s.steps.push_back(step);
  return s;
}

// Direct all-to-all: every block sent and received in one step (pairwise needs N-1).
// Out of place, the own block is copied in the exchange step (as in all-gather above). In place,
// every outgoing block would be overwritten in that same step, so the blocks for the peers are
// copied aside first (not the own block, which stays where it is): block q at scratch block q,
// less one past the own.
Schedule DirectAllToAll(const CollArgs& a) {
  Schedule s;
  const size_t c = a.count, r = (size_t)a.rank, N = (size_t)a.nranks;
  if (c == 0) return s;
  if (a.inPlace && N > 1) {
    s.scratchElems = (N - 1) * c;
    Step aside;
    if (r > 0) aside.ops.push_back(MakeCopy({kRecvBuf, 0}, {kScratchBuf, 0}, r * c));
    if (r + 1 < N) aside.ops.push_back(MakeCopy({kRecvBuf, (r + 1) * c}, {kScratchBuf, r * c}, (N - 1 - r) * c));
    s.steps.push_back(aside);
  }
  Step step = ExchangeWithAll(a, [&](int to) {
    const size_t q = (size_t)to;
    return a.inPlace ? BufRef{kScratchBuf, (q - (q > r)) * c} : BufRef{kSendBuf, q * c};
  });
  if (!a.inPlace) step.ops.push_back(MakeFinalCopy({kSendBuf, r * c}, {kRecvBuf, r * c}, c));
  if (!step.ops.empty()) s.steps.push_back(step);
  return s;
}

}  // namespace tccl
