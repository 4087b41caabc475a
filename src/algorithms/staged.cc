// Staged broadcast and all-gather: a rank copies its data, piece by piece, into two slots of shared
// scratch (Schedule::sharedScratch), and every other rank reads each piece from there in one copy.
//
// Why: with buffers peers cannot map (plain malloc in separate processes), every other algorithm
// moves the data through pair channels, two copies per receiver (chain broadcast: 2(N-1) copies of
// the message in all; ring or direct all-gather: 2(N-1) copies of every block). Staged costs the
// owner one copy in and each receiver one copy out: N copies of each message in all, which is what
// counts when N ranks share a few cores. With two ranks the saving is nil (2 copies either way) and
// the pair channels overlap their copies just as well, so the cost model keeps them there.
//
// Pieces are max(1 MiB (broadcast) or 512 KiB (all-gather), the single-copy threshold): every piece
// is read in one copy, and the slots stay in the last-level cache, so the owner writes and the
// receivers read cached lines while the user's buffers stream from memory. While the receivers
// read piece i from one slot, the owner stages piece i+1 into the other; a slot is rewritten only
// in the step after the one that sent it, whose sends completed when every receiver had read them.
//
// The broadcast has one owner (the root); the all-gather is N of them at once, each staging its
// own block, every rank reading piece i of every other block in step i.
#include "algorithms/generators.h"

#include <algorithm>

namespace tccl {

namespace {

constexpr size_t kPieceBytes = (size_t)1 << 20;
// The all-gather stages N blocks at once, so its slots take N times the cache: 512 KiB pieces keep
// all of them (8 MiB at 8 ranks) well inside a 32 MiB last-level cache. Forced at 4 ranks on
// 2 cores (two runs each), 4-64 MiB all-gathers took 30-35% less time than with 1 MiB pieces
// (16 MiB: 1.97-2.11 ms against 2.70-2.77); 256 KiB pieces measured the same as 512 KiB.
constexpr size_t kAllGatherPieceBytes = (size_t)1 << 19;

// How a message of `count` elements is cut into pieces and which slot each piece is staged in.
struct StagingPlan {
  StagingPlan(const CollArgs& a, size_t count, size_t pieceBytes = kPieceBytes)
      : count(count),
        piece(std::max<size_t>(1, (std::max(pieceBytes, a.sharedScratchBytes) + a.elemSize - 1) / a.elemSize)),
        pieces((count + piece - 1) / piece) {}
  size_t start(size_t i) const { return std::min(count, i * piece); }
  size_t len(size_t i) const { return start(i + 1) - start(i); }
  BufRef slot(size_t i) const { return {kScratchBuf, (i % 2) * piece}; }
  size_t count, piece, pieces;
};

// The owner's side: stage piece 0, then in step i send slot(i) to every other rank, stage piece
// i+1, and (out of place) copy piece i to its own place in the output at `own`. `receives(i, step)`
// adds what this rank receives in step i (the all-gather's other blocks; nothing for a root).
template <typename Receives>
Schedule StageAndSend(const CollArgs& a, const StagingPlan& p, BufRef own, Receives receives) {
  Schedule s;
  const int N = a.nranks, r = a.rank;
  s.sharedScratch = true;
  s.scratchElems = std::min(p.count, 2 * p.piece);
  s.steps.push_back({{MakeCopy({kSendBuf, 0}, p.slot(0), p.len(0))}});
  for (size_t i = 0; i < p.pieces; ++i) {
    Step step;
    for (int k = 1; k < N; ++k) step.ops.push_back(MakeSend((r + k) % N, p.slot(i), p.len(i)));
    receives(i, step);
    if (i + 1 < p.pieces) step.ops.push_back(MakeCopy({kSendBuf, p.start(i + 1)}, p.slot(i + 1), p.len(i + 1)));
    if (!a.inPlace) step.ops.push_back(MakeFinalCopy({kSendBuf, p.start(i)}, {own.buf, own.offset + p.start(i)}, p.len(i)));
    s.steps.push_back(step);
  }
  return s;
}

}  // namespace

Schedule StagedBroadcast(const CollArgs& a) {
  Schedule s;
  if (NothingToExchange(a, &s)) return s;
  const StagingPlan p(a, a.count);
  if (a.rank != a.root) {
    for (size_t i = 0; i < p.pieces; ++i) s.steps.push_back({{MakeFinalRecv(a.root, {kRecvBuf, p.start(i)}, p.len(i))}});
    return s;
  }
  return StageAndSend(a, p, {kRecvBuf, 0}, [](size_t, Step&) {});
}

Schedule StagedAllGather(const CollArgs& a) {
  Schedule s;
  const int N = a.nranks, r = a.rank;
  const size_t c = a.count;
  if (NothingToExchange(a, &s)) return s;
  const StagingPlan p(a, c, kAllGatherPieceBytes);
  // Piece i of every other block arrives in step i; receiving from r-1, r-2, ... matches the
  // owners' sends to r+1, r+2, ... (each pair's messages in the same order on both ends).
  return StageAndSend(a, p, {kRecvBuf, (size_t)r * c}, [&](size_t i, Step& step) {
    for (int k = 1; k < N; ++k) {
      const int from = RankMod(r - k, N);
      step.ops.push_back(MakeFinalRecv(from, {kRecvBuf, (size_t)from * c + p.start(i)}, p.len(i)));
    }
  });
}

}  // namespace tccl
