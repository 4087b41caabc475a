// Pairwise-exchange all-to-all: ranks meet in pairs, at most one partner per rank per round, and
// each sends the other the block it holds for it and receives the other's block into that same
// place. The pairing is a round-robin tournament (the circle method): with M = N for odd N and
// M = N-1 for even N, rank r < M meets (2k - r) mod M in round k (0..M-1), and where that is r
// itself it meets rank N-1 (even N) or sits the round out (odd N; no pairing of an odd number of
// ranks leaves nobody out). So N-1 rounds for even N, N for odd N; p meets r in the round r meets p.
// In place and out of place follow the same rounds and send the same messages, so ranks may mix
// the two in one call. (Exchanging with r+k and r-k in round k takes N-1 rounds for any N, but an
// in-place rank cannot follow it without holding about N/2 blocks aside.)
//
// In place, a block is sent in the round that overwrites it, and nothing received lands on data
// still to be sent. The outgoing slice is first copied aside into one of two scratch slots, because
// a send may be read by the peer straight from its source until it completes (single copy) and the
// receive into the same slice runs alongside it; copying the next slice aside overlaps with this
// slice's exchange. Per block that is three copies (aside, into the channel, out of it), as out of
// place, where out of place also copies the own block; and two slices of scratch, where setting
// every block aside first (direct.cc) takes N-1 blocks.
#include <algorithm>
#include <vector>

#include "algorithms/generators.h"

namespace tccl {

namespace {

// The ranks `r` meets, in round order.
std::vector<int> PartnersInRoundOrder(int r, int N) {
  const int M = N % 2 ? N : N - 1;
  std::vector<int> partners;
  for (int k = 0; k < M; ++k) {
    if (r == M) {  // even N: the last rank meets the one the circle leaves out
      partners.push_back(k);
      continue;
    }
    const int p = RankMod(2 * k - r, M);
    if (p != r) partners.push_back(p);
    else if (M < N) partners.push_back(N - 1);
  }
  return partners;
}

}  // namespace

Schedule PairwiseAllToAll(const CollArgs& a) {
  Schedule s;
  if (NothingToExchange(a, &s)) return s;
  const int r = a.rank;
  const size_t c = a.count;
  const size_t K = SliceCount(c, a.sliceElems);
  struct Piece {
    int peer;
    size_t at, n;  // the same place in the send and the receive buffer, elements
  };
  std::vector<Piece> pieces;
  for (int p : PartnersInRoundOrder(r, a.nranks))
    for (size_t t = 0; t < K; ++t) {
      size_t b = PartStart(c, K, t), n = PartStart(c, K, t + 1) - b;
      if (n) pieces.push_back({p, (size_t)p * c + b, n});
    }
  // In place, piece u is sent from scratch slot u % 2, where the step before copied it.
  const size_t slot = (c + K - 1) / K;  // the largest slice
  auto stash = [&](size_t u) { return BufRef{kScratchBuf, (u % 2) * slot}; };
  if (a.inPlace) {
    s.scratchElems = slot * std::min<size_t>(2, pieces.size());
    s.steps.push_back({{MakeCopy({kRecvBuf, pieces[0].at}, stash(0), pieces[0].n)}});
  }
  for (size_t u = 0; u < pieces.size(); ++u) {
    const Piece& x = pieces[u];
    const BufRef source = a.inPlace ? stash(u) : BufRef{kSendBuf, x.at};
    Step step{{MakeSend(x.peer, source, x.n), MakeFinalRecv(x.peer, {kRecvBuf, x.at}, x.n)}};
    if (!a.inPlace && u == 0) step.ops.push_back(MakeFinalCopy({kSendBuf, (size_t)r * c}, {kRecvBuf, (size_t)r * c}, c));
    if (a.inPlace && u + 1 < pieces.size())
      step.ops.push_back(MakeCopy({kRecvBuf, pieces[u + 1].at}, stash(u + 1), pieces[u + 1].n));
    s.steps.push_back(step);
  }
  return s;
}

}  // namespace tccl
