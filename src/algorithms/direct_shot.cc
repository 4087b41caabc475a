// Canonical-order algorithms for large messages (docs/determinism.md). Every reduced element is
// computed at one rank, along the canonical tree (SliceTreePlan below), so the result has the
// canonical bits whatever the size, slicing or transport.
//
//  - direct reduce-scatter: the owner of each chunk receives that chunk's slice from every rank and
//    tree-reduces it; each rank sends and receives (N-1)/N of the data, as ring does.
//  - two-shot all-reduce: direct reduce-scatter over N balanced chunks, then a direct all-gather of
//    the reduced chunks (each owner sends its slice to every rank).
//  - direct reduce: every rank sends each slice to the root, which tree-reduces it.
// Slicing bounds scratch memory to N slices, whatever the message size.
#include <algorithm>

#include "algorithms/generators.h"

namespace tccl {

namespace {

// Plans the canonical tree for one slice at the rank that owns it, fusing receives with
// reductions wherever an operand is ready when the data arrives:
//   own leaf + remote leaf      -> one receive-and-reduce
//   remote leaf + remote leaf   -> receive into a slot, then receive-and-reduce onto it
//   anything else               -> receive the remote leaf into a slot; a local reduce later
// The receives all belong to the exchange step (so every rank keeps consuming every peer and
// nothing can deadlock); the local reduces follow in post-order, children before parents.
// Operand order inside a node does not matter: sum and prod are commutative bit for bit (NaN
// results are canonical) and max/min are exact; the tree's shape is what the simulator checks.
class SliceTreePlan {
 public:
  // `outFinal`: the schedule does not read `out` again, so the receive-and-reduce that writes it
  // may store past the cache (Op::finalDst).
  SliceTreePlan(int rank, size_t n, size_t slot, BufRef own, BufRef out, bool outFinal, Step* exchange,
                std::vector<Step>* locals)
      : rank_(rank), n_(n), slot_(slot), own_(own), out_(out), outFinal_(outFinal), exchange_(exchange),
        locals_(locals) {}

  void Build(int nranks) { Node(0, nranks, true); }
  static size_t SlotsNeeded(int nranks) { return 2 * (size_t)nranks; }

 private:
  struct Value {
    bool remote;  // a peer's leaf, not yet received
    int peer;
    bool ready;   // available during the exchange step (only the own leaf)
    BufRef at;
  };

  BufRef NewSlot() { return {kScratchBuf, (nextSlot_++) * slot_}; }

  // Receives a remote leaf into a fresh slot; returns the exchange op index.
  int ReceiveInto(int peer, BufRef dst) {
    exchange_->ops.push_back(MakeRecv(peer, dst, n_));
    return (int)exchange_->ops.size() - 1;
  }

  Value Node(int lo, int hi, bool root) {
    if (hi - lo == 1) return lo == rank_ ? Value{false, -1, true, own_} : Value{true, lo, false, {}};
    int mid = lo + (hi - lo + 1) / 2;
    Value l = Node(lo, mid, false), r = Node(mid, hi, false);
    BufRef dst = root ? out_ : NewSlot();
    if (l.remote && r.remote) {
      int first = ReceiveInto(l.peer, dst);
      Op fused = MakeRecvReduce(r.peer, dst, dst, n_);
      fused.after = first;
      fused.finalDst = root && outFinal_;
      exchange_->ops.push_back(fused);
      return {false, -1, false, dst};
    }
    if (l.remote != r.remote) {
      const Value& remote = l.remote ? l : r;
      const Value& local = l.remote ? r : l;
      if (local.ready) {
        exchange_->ops.push_back(MakeRecvReduce(remote.peer, dst, local.at, n_));
        exchange_->ops.back().finalDst = root && outFinal_;
        return {false, -1, false, dst};
      }
      BufRef tmp = NewSlot();
      ReceiveInto(remote.peer, tmp);
      AddLocalReduce(dst, local.at, tmp);
      return {false, -1, false, dst};
    }
    AddLocalReduce(dst, l.at, r.at);
    return {false, -1, false, dst};
  }

  void AddLocalReduce(BufRef dst, BufRef x, BufRef y) { locals_->push_back({{MakeReduce(dst, x, y, n_)}}); }

  int rank_;
  size_t n_, slot_;
  BufRef own_, out_;
  bool outFinal_;
  Step* exchange_;
  std::vector<Step>* locals_;
  size_t nextSlot_ = 0;
};

// Where chunk c of the reduction lives: `begin` in the input buffer and `out` in the output.
struct ChunkMap {
  size_t (*begin)(const CollArgs&, int c);
  size_t (*length)(const CollArgs&, int c);
};

size_t BalancedBegin(const CollArgs& a, int c) { return PartStart(a.count, a.nranks, c); }
size_t BalancedLength(const CollArgs& a, int c) {
  return PartStart(a.count, a.nranks, c + 1) - PartStart(a.count, a.nranks, c);
}
size_t BlockBegin(const CollArgs& a, int c) { return (size_t)c * a.count; }
size_t BlockLength(const CollArgs& a, int) { return a.count; }

// Appends the reduce-scatter steps for slice j: one exchange step (sends of this slice of every
// other chunk to its owner; receives of this chunk's slice from every rank, fused into the canonical
// tree where possible), then the remaining local reduces, writing the slice's result to `out`.
void AppendScatterSlice(Schedule& s, const CollArgs& a, const ChunkMap& m, size_t K, size_t j, size_t slot,
                        BufRef out, bool outFinal) {
  const int N = a.nranks, r = a.rank;
  Step exchange;
  for (int k = 1; k < N; ++k) {
    int to = (r + k) % N;
    size_t tb = m.begin(a, to) + PartStart(m.length(a, to), K, j);
    size_t tn = PartStart(m.length(a, to), K, j + 1) - PartStart(m.length(a, to), K, j);
    if (tn) exchange.ops.push_back(MakeSend(to, {kSendBuf, tb}, tn));
  }
  size_t ob = PartStart(m.length(a, r), K, j), on = PartStart(m.length(a, r), K, j + 1) - ob;
  std::vector<Step> locals;
  if (on) {
    SliceTreePlan plan(r, on, slot, {kSendBuf, m.begin(a, r) + ob}, {out.buf, out.offset + ob},
                       outFinal && FinalReduceOutput(a), &exchange, &locals);
    plan.Build(N);
  }
  if (!exchange.ops.empty()) s.steps.push_back(exchange);
  for (Step& st : locals) s.steps.push_back(st);
  if (on && a.op == tcclAvg) s.steps.push_back({{MakeDivide({out.buf, out.offset + ob}, on)}});
}

// The slice of these algorithms. A step of theirs moves a slice to or from each of the N-1 peers,
// so with the ring's slice (CollArgs::sliceElems, one send per step) a step's working set grows
// with N. The default 128 KiB slice was sized so a step (a slice and its partner) stays well
// inside a 512 KiB L2; here a step's 2(N-1) slices are kept within four default slices, the L2 it
// was sized for: from 4 ranks on the slice shrinks (4 ranks 85 KiB, 8 ranks 36 KiB). Alternated
// on 2 cores, 1-64 MiB all-reduce: 8 ranks 16-47% less time from 1 MiB, 7 ranks 14-29% less from
// 4 MiB, 4 and 6 ranks within the spread (docs/performance.md, "The direct algorithms' slice at
// more ranks"). Never below a cache line (nor above the ring's slice): slices that share lines
// gain nothing, and tiny ring slices (tests run 64 B) would multiply the steps.
size_t DirectSliceElems(const CollArgs& a) {
  const size_t peers = (size_t)std::max(1, a.nranks - 1);
  const size_t line = std::max<size_t>(1, 64 / std::max<size_t>(1, a.elemSize));
  return std::max<size_t>(1, std::min(a.sliceElems, std::max(line, 2 * a.sliceElems / peers)));
}

// Slices per chunk of `largest` elements. Where peers read this call's buffers in one copy
// (CollArgs::singleCopyBytes: tcclMemAlloc buffers, ranks as threads), a slice below that size
// goes through the rings: then as few slices as keep each at least that size (at most twice it),
// if that makes at least `leastSlices`. The two-shot asks for four: its gather reads lines the
// peer has just written, and only the steps where one slice's gather runs beside the next one's
// exchange hide that. With one slice its 2-rank 512 KiB all-reduce took 39 us out of place
// against 17 for the direct algorithm, which the model then no longer picked; with two (1 MiB) it
// was level with the direct algorithm summed over a call in place and one out of place, and 4x
// slower out of place in the VM's slow state; from four (2 MiB) faster in both states. 2 ranks,
// tcclMemAlloc buffers, 16 MiB all-reduce in place: 1.2 ms against 2.4 before; 512 KiB
// reduce-scatter in one slice: 5-8 us against 16-21 (docs/single_copy.md, "Slices read in one copy").
size_t DirectSliceCount(const CollArgs& a, size_t largest, size_t leastSlices) {
  const size_t K = SliceCount(largest, DirectSliceElems(a));
  if (!a.singleCopyBytes) return K;
  const size_t wholeSlices = largest / ((a.singleCopyBytes + a.elemSize - 1) / a.elemSize);
  return wholeSlices >= leastSlices ? std::min(K, wholeSlices) : K;
}

size_t LargestChunk(const CollArgs& a, const ChunkMap& m) {
  size_t largest = 0;
  for (int c = 0; c < a.nranks; ++c) largest = std::max(largest, m.length(a, c));
  return largest;
}

}  // namespace

Schedule DirectReduceScatter(const CollArgs& a) {
  Schedule s;
  const size_t rc = a.count;
  if (a.nranks == 1) {
    if (!a.inPlace && rc) s.steps.push_back({{MakeFinalCopy({kSendBuf, 0}, {kRecvBuf, 0}, rc)}});
    return s;
  }
  if (rc == 0) return s;
  ChunkMap m{&BlockBegin, &BlockLength};
  const size_t K = DirectSliceCount(a, rc, 1), slot = (rc + K - 1) / K;
  s.scratchElems = slot * SliceTreePlan::SlotsNeeded(a.nranks);
  for (size_t j = 0; j < K; ++j) AppendScatterSlice(s, a, m, K, j, slot, {kRecvBuf, 0}, /*outFinal=*/true);
  return s;
}

Schedule TwoShotAllReduce(const CollArgs& a) {
  Schedule s;
  const int N = a.nranks, r = a.rank;
  if (NothingToExchange(a, &s)) return s;
  ChunkMap m{&BalancedBegin, &BalancedLength};
  const size_t largest = LargestChunk(a, m);
  const size_t K = DirectSliceCount(a, largest, 4), slot = (largest + K - 1) / K;
  s.scratchElems = slot * SliceTreePlan::SlotsNeeded(N);
  // All-gather of slice j: every owner sends its reduced slice to every rank. Its messages: this
  // rank's reduced slice j to `to`, and `from`'s into its final place (count 0: nothing to move).
  auto gatherSend = [&](int to, size_t j) {
    const size_t ob = PartStart(m.length(a, r), K, j), on = PartStart(m.length(a, r), K, j + 1) - ob;
    return MakeSend(to, {kRecvBuf, m.begin(a, r) + ob}, on);
  };
  auto gatherRecv = [&](int from, size_t j) {
    const size_t fb = PartStart(m.length(a, from), K, j), fn = PartStart(m.length(a, from), K, j + 1) - fb;
    return MakeFinalRecv(from, {kRecvBuf, m.begin(a, from) + fb}, fn);
  };
  auto appendGather = [&](size_t j, Step* gather) {
    for (int k = 1; k < N; ++k)
      for (const Op& op : {gatherSend((r + k) % N, j), gatherRecv((r - k + N) % N, j)})
        if (op.count) gather->ops.push_back(op);
  };
  // With two ranks, slice j's reduced half goes out in slice j's own exchange step, as a send that
  // waits for the receive-and-reduce (Op::after): the executor writes each reduced piece straight
  // into the send's ring and copies it on into the output from there (Op::forwardTo), so the
  // output is stored without being read first (past the cache where the buffers outgrow it) and
  // never read back. The peer's reduced half of slice j comes in the next step, listed first (it is
  // ahead of that step's exchange on the stream), so no step waits for the peer's reduce of what
  // it sent in that step; in place it lands on the input slice the step before sent. 2 ranks,
  // 256 MiB, alternated on 2 cores: 37-40 ms against 43-47 (docs/performance.md, "The reduced half
  // written straight into the send").
  // A send of slice j then completes before the peer takes it, so this layout needs buffering
  // (CollArgs::bufferedBytes): a rank enters step t only after taking what the peer sent in its
  // step t-1, so the peer is at step t-1 or later, and of this rank's messages it has at most five
  // not yet taken — the gather of t-2 and the exchange of t-1 (its step t-1's receives), the gather
  // of t-1, and the exchange and gather of t. Each is at most a slice, placed 16-byte aligned.
  // Elsewhere (TCP, small rings, slices read in one copy), for slices small enough to travel with
  // their tag (nothing to forward), with avg (the slice is divided in a step of its own first) and
  // where the buffers fit the cache (CollArgs::buffersOutgrowCache; there the read-back comes from
  // the cache and the layout measured up to 12% slower in place), slice j goes out with slice
  // j+1's exchange, read back while still in the cache.
  // With more ranks the slice read back is 1/N of the message, and each step would wait for every
  // peer's reduction of the slice before: interleaved at 8 ranks on 2 cores, 4-24% slower from
  // 8 MiB in one run, +-6% in another (docs/performance.md, "The two-shot's all-gather while the
  // slice is in cache"). Both ends append the exchange's messages before the gather's.
  const size_t sliceBytes = slot * a.elemSize;
  const bool buffered = 5 * (sliceBytes + 64) <= a.bufferedBytes && (a.bufferedBelow == 0 || sliceBytes < a.bufferedBelow);
  const bool forward = N == 2 && a.op != tcclAvg && buffered && sliceBytes > kStagedSendBytes && a.buffersOutgrowCache;
  const bool interleave = N == 2 && !forward;
  const int peer = 1 - r;  // of two ranks
  for (size_t j = 0; j < K; ++j) {
    const size_t exchangeAt = s.steps.size();
    // In place, the reduced slice overwrites this rank's own input, which no peer needs any more
    // (peers only receive other chunks of it, sent in the exchange step before or in this one).
    AppendScatterSlice(s, a, m, K, j, slot, {kRecvBuf, m.begin(a, r)}, /*outFinal=*/forward);
    if (!forward && (!interleave || j == 0)) continue;
    if (s.steps.size() == exchangeAt) s.steps.push_back({});
    Step& step = s.steps[exchangeAt];
    if (!forward) {
      appendGather(j - 1, &step);
      continue;
    }
    Step gather;
    if (j > 0 && gatherRecv(peer, j - 1).count) gather.ops.push_back(gatherRecv(peer, j - 1));
    int reduced = -1;
    for (const Op& op : step.ops) {
      if (op.kind == OpKind::RecvReduce) reduced = (int)gather.ops.size();
      gather.ops.push_back(op);
    }
    Op send = gatherSend(peer, j);
    send.after = reduced;
    if (send.count) gather.ops.push_back(send);
    step = gather;
  }
  if (forward) {
    if (gatherRecv(peer, K - 1).count) s.steps.push_back({{gatherRecv(peer, K - 1)}});
    return s;
  }
  for (size_t j = interleave ? K - 1 : 0; j < K; ++j) {
    Step gather;
    appendGather(j, &gather);
    if (!gather.ops.empty()) s.steps.push_back(gather);
  }
  return s;
}

Schedule DirectReduce(const CollArgs& a) {
  Schedule s;
  const int N = a.nranks, r = a.rank;
  if (NothingToExchange(a, &s)) return s;
  const size_t K = DirectSliceCount(a, a.count, 1), slot = (a.count + K - 1) / K;
  if (r == a.root) s.scratchElems = slot * SliceTreePlan::SlotsNeeded(N);
  for (size_t j = 0; j < K; ++j) {
    size_t b = PartStart(a.count, K, j), n = PartStart(a.count, K, j + 1) - b;
    if (!n) continue;
    if (r != a.root) {
      s.steps.push_back({{MakeSend(a.root, {kSendBuf, b}, n)}});
      continue;
    }
    Step gather;
    std::vector<Step> locals;
    SliceTreePlan plan(r, n, slot, {kSendBuf, b}, {kRecvBuf, b}, FinalReduceOutput(a), &gather, &locals);
    plan.Build(N);
    s.steps.push_back(gather);
    for (Step& st : locals) s.steps.push_back(st);
    if (a.op == tcclAvg) s.steps.push_back({{MakeDivide({kRecvBuf, b}, n)}});
  }
  return s;
}

}  // namespace tccl
