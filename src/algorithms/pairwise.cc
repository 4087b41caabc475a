// Pairwise-exchange all-to-all: ranks meet in pairs, one pair per rank per round, and each sends
// the other the block it holds for it and receives the other's block into that same place. With N
// a power of two, rank r meets r XOR k in round k (1..N-1); otherwise r meets (k - r) mod N in round
// k (0..N-1) and sits out the round where that is itself. Both pairings are symmetric (p meets r in
// the round r meets p), and in place and out of place follow the same rounds and send the same
// messages, so ranks may mix the two in one call.
//
// In place, a block is sent in the round that overwrites it, and nothing received lands on data
// still to be sent. The outgoing slice is first copied aside into one of two scratch slots, because
// a send may be read by the peer straight from its source until it completes (single copy) and the
// receive into the same slice runs alongside it; copying the next slice aside overlaps with this
// slice's exchange. That is one copy per block more than out of place without the own block's copy
// (3 in all, as out of place), and two slices of scratch, where setting every block aside first
// (direct.cc) takes N-1 blocks of scratch.
#include <algorithm>
#include <vector>

#include "algorithms/generators.h"

namespace tccl {

namespace {

bool IsPowerOfTwo(int n) { return n > 0 && (n & (n - 1)) == 0; }

// The ranks `r` meets, in round order.
std::vector<int> PartnersInRoundOrder(int r, int N) {
  std::vector<int> partners;
  if (IsPowerOfTwo(N)) {
    for (int k = 1; k < N; ++k) partners.push_back(r ^ k);
  } else {
    for (int k = 0; k < N; ++k)
      if (RankMod(k - r, N) != r) partners.push_back(RankMod(k - r, N));
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
  if (!a.inPlace) {
    for (size_t u = 0; u < pieces.size(); ++u) {
      const Piece& x = pieces[u];
      Step step{{MakeSend(x.peer, {kSendBuf, x.at}, x.n), MakeRecv(x.peer, {kRecvBuf, x.at}, x.n)}};
      if (u == 0) step.ops.push_back(MakeCopy({kSendBuf, (size_t)r * c}, {kRecvBuf, (size_t)r * c}, c));
      s.steps.push_back(step);
    }
    return s;
  }
  const size_t slot = (c + K - 1) / K;  // the largest slice
  s.scratchElems = slot * std::min<size_t>(2, pieces.size());
  auto stash = [&](size_t u) { return BufRef{kScratchBuf, (u % 2) * slot}; };
  s.steps.push_back({{MakeCopy({kRecvBuf, pieces[0].at}, stash(0), pieces[0].n)}});
  for (size_t u = 0; u < pieces.size(); ++u) {
    const Piece& x = pieces[u];
    Step step{{MakeSend(x.peer, stash(u), x.n), MakeRecv(x.peer, {kRecvBuf, x.at}, x.n)}};
    if (u + 1 < pieces.size())
      step.ops.push_back(MakeCopy({kRecvBuf, pieces[u + 1].at}, stash(u + 1), pieces[u + 1].n));
    s.steps.push_back(step);
  }
  return s;
}

}  // namespace tccl
