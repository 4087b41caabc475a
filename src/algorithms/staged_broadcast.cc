// Staged broadcast: the root copies the message, piece by piece, into two slots of shared scratch
// (Schedule::sharedScratch), and every other rank reads each piece from there in one copy.
//
// Why: with buffers peers cannot map (plain malloc in separate processes), every other broadcast
// moves the data through pair channels, two copies per receiver (chain: 2(N-1) copies of the
// message in all). Staged costs the root one copy in and each receiver one copy out: N copies in
// all, which is what counts when N ranks share a few cores. With two ranks on two cores the chain
// overlaps its copies just as well and the cost model keeps it.
//
// Pieces are max(1 MiB, the single-copy threshold): every piece is read in one copy, and the two
// slots (2 MiB) stay in the last-level cache, so the root writes and the receivers read cached
// lines while the user's buffers stream from memory. While the receivers read piece i from one
// slot, the root stages piece i+1 into the other; a slot is rewritten only in the step after the
// one that sent it, whose sends completed when every receiver had read them.
#include "algorithms/generators.h"

#include <algorithm>

namespace tccl {

namespace {
constexpr size_t kPieceBytes = (size_t)1 << 20;
}

Schedule StagedBroadcast(const CollArgs& a) {
  Schedule s;
  const int N = a.nranks, r = a.rank;
  const size_t c = a.count;
  if (c == 0) return s;
  const size_t piece = std::max<size_t>(1, (std::max(kPieceBytes, a.sharedScratchBytes) + a.elemSize - 1) / a.elemSize);
  const size_t pieces = (c + piece - 1) / piece;
  auto start = [&](size_t i) { return std::min(c, i * piece); };
  auto len = [&](size_t i) { return start(i + 1) - start(i); };
  if (r != a.root) {
    for (size_t i = 0; i < pieces; ++i) s.steps.push_back({{MakeRecv(a.root, {kRecvBuf, start(i)}, len(i))}});
    return s;
  }
  if (N == 1) {
    if (!a.inPlace) s.steps.push_back({{MakeCopy({kSendBuf, 0}, {kRecvBuf, 0}, c)}});
    return s;
  }
  s.sharedScratch = true;
  s.scratchElems = std::min(c, 2 * piece);
  auto slot = [&](size_t i) { return BufRef{kScratchBuf, (i % 2) * piece}; };
  s.steps.push_back({{MakeCopy({kSendBuf, 0}, slot(0), len(0))}});
  for (size_t i = 0; i < pieces; ++i) {
    Step step;
    for (int k = 1; k < N; ++k) step.ops.push_back(MakeSend((r + k) % N, slot(i), len(i)));
    if (i + 1 < pieces) step.ops.push_back(MakeCopy({kSendBuf, start(i + 1)}, slot(i + 1), len(i + 1)));
    if (!a.inPlace) step.ops.push_back(MakeCopy({kSendBuf, start(i)}, {kRecvBuf, start(i)}, len(i)));
    s.steps.push_back(step);
  }
  return s;
}

}  // namespace tccl
