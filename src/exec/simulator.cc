#include "exec/simulator.h"

#include <algorithm>
#include <vector>

#include "core/hash.h"
#include "core/status.h"

namespace tccl {

namespace {

// A symbolic element: which ranks' inputs it holds, for which global element index, and the shape
// of the reduction tree that produced it (a structural hash: equal hashes mean equal trees).
struct Sym {
  uint64_t tree = 0;
  uint64_t mask = 0;      // bit r: rank r contributed (ranks >= 64 fold onto bit r % 64)
  uint32_t count = 0;     // contributions (catches double counting that the mask hides)
  uint32_t divides = 0;   // avg divisions applied
  int32_t origin = -1;    // source rank for data that was never reduced
  int64_t elem = -1;      // global element index; -2 once mismatched elements were combined
  bool operator==(const Sym& o) const {
    return mask == o.mask && count == o.count && divides == o.divides && origin == o.origin && elem == o.elem &&
           tree == o.tree;
  }
};

uint64_t LeafTree(int rank) { return Mix64(0x1000 + (uint64_t)rank); }
// Symmetric: sum and prod are commutative bit for bit (every NaN result is the canonical NaN, and
// IEEE rounding is symmetric; tests/kernels_test.cc checks it), and max/min are exact, so a node's
// operand order never changes bits: only the tree's shape matters.
uint64_t NodeTree(uint64_t a, uint64_t b) {
  uint64_t lo = std::min(a, b), hi = std::max(a, b);
  return Mix64(lo * 3 + Mix64(hi + 0x5bd1e995));
}

// The canonical tree over ranks [lo, hi) of docs/determinism.md.
uint64_t CanonicalTree(int lo, int hi) {
  if (hi - lo == 1) return LeafTree(lo);
  int mid = lo + (hi - lo + 1) / 2;
  return NodeTree(CanonicalTree(lo, mid), CanonicalTree(mid, hi));
}

Sym Input(int rank, int64_t elem) {
  Sym s;
  s.tree = LeafTree(rank);
  s.mask = 1ull << (rank % 64);
  s.count = 1;
  s.origin = rank;
  s.elem = elem;
  return s;
}

Sym Combine(const Sym& a, const Sym& b) {
  Sym s;
  s.tree = NodeTree(a.tree, b.tree);
  s.mask = a.mask | b.mask;
  s.count = a.count + b.count;
  s.divides = a.divides + b.divides;
  s.elem = a.elem == b.elem ? a.elem : -2;
  return s;
}

std::string Show(const Sym& s) {
  return Format("{mask=%llx count=%u divides=%u origin=%d elem=%lld tree=%016llx}", (unsigned long long)s.mask,
                s.count, s.divides, s.origin, (long long)s.elem, (unsigned long long)s.tree);
}

struct RankState {
  bool inPlace = false;
  std::vector<Sym> send, recv, scratch;
  Schedule sched;
  size_t step = 0;
  bool stepStarted = false;
  std::vector<size_t> recvDone;  // per op of the current step
  std::vector<size_t> sendEnd;   // per op: the mailbox's pushed count once this send is in
  std::vector<bool> posted;      // per send: in its mailbox (one that waits, Op::after, goes later)
  size_t unposted = 0;           // sends of the step not in their mailbox yet
};

struct Sizes {
  size_t send, recv;
};

Sizes BufferSizes(const CollArgs& a) {
  size_t c = a.count, N = a.nranks;
  switch (a.kind) {
    case CollKind::AllGather: return {c, N * c};
    case CollKind::ReduceScatter: return {N * c, c};
    case CollKind::AllToAll: return {N * c, N * c};
    default: return {c, c};
  }
}

class Sim {
 public:
  Sim(const AlgorithmInfo& alg, const CollArgs& a, bool sendsWait, const std::vector<bool>& inPlaceRanks,
      size_t channelBytes)
      : a_(a),
        ranks_(a.nranks),
        checkTree_(alg.canonicalOrder),
        mail_((size_t)a.nranks * a.nranks),
        sendsWait_(sendsWait),
        channelElems_(channelBytes / std::max<size_t>(1, a.elemSize)) {
    Sizes sz = BufferSizes(a);
    for (int r = 0; r < a.nranks; ++r) {
      RankState& st = ranks_[r];
      st.inPlace = inPlaceRanks.empty() ? a.inPlace : inPlaceRanks.at(r);
      CollArgs ra = a;
      ra.rank = r;
      ra.inPlace = st.inPlace;
      st.sched = alg.generate(ra);
      st.send.resize(sz.send);
      st.recv.resize(sz.recv);
      // Global element index of each input: reductions index the full vector; all-gather and
      // all-to-all tag each element with its position in the sender's buffer.
      for (size_t i = 0; i < sz.send; ++i) st.send[i] = Input(r, (int64_t)i);
      st.scratch.resize(st.sched.scratchElems);
      if (st.inPlace) ApplyInPlace(r, st);
    }
  }

  SimResult Run() {
    SimResult res;
    for (auto& r : ranks_) res.steps = std::max(res.steps, r.sched.steps.size());
    for (;;) {
      bool progressed = false, allDone = true;
      for (int r = 0; r < a_.nranks; ++r) {
        if (ranks_[r].step >= ranks_[r].sched.steps.size()) continue;
        allDone = false;
        std::string err;
        if (Advance(r, &progressed, &err)) continue;
        res.ok = false;
        res.error = err;
        return res;
      }
      if (allDone) break;
      if (!progressed) {
        res.ok = false;
        res.error = "deadlock: no rank can progress;" + Blocked();
        return res;
      }
    }
    for (size_t i = 0; i < mail_.size(); ++i)
      if (mail_[i].taken < mail_[i].sent.size()) {
        res.ok = false;
        res.error = Format("%zu elements sent from rank %d to rank %d were never received",
                           mail_[i].sent.size() - mail_[i].taken, (int)(i / a_.nranks), (int)(i % a_.nranks));
        return res;
      }
    res.messages = messages_;
    std::string err = CheckOutputs();
    if (!err.empty()) {
      res.ok = false;
      res.error = err;
    }
    return res;
  }

 private:
  // In place, the "send" data lives inside the receive buffer (or vice versa). The simulator keeps
  // one array per rank and maps the aliased one onto it.
  void ApplyInPlace(int r, RankState& st) {
    size_t c = a_.count;
    switch (a_.kind) {
      case CollKind::AllGather:
        for (size_t i = 0; i < c; ++i) st.recv[r * c + i] = st.send[i];
        break;
      case CollKind::ReduceScatter:
        break;  // recv aliases send + r*c: resolved in Ref()
      default:
        if (a_.kind == CollKind::Broadcast && r != a_.root) break;
        st.recv = st.send;
        break;
    }
  }

  Sym* Ref(int r, BufRef ref, size_t i, std::string* err) {
    RankState& st = ranks_[r];
    size_t at = ref.offset + i;
    std::vector<Sym>* v = nullptr;
    int buf = ref.buf;
    if (st.inPlace) {
      // Resolve aliasing: one of send/recv is a view of the other.
      if (a_.kind == CollKind::AllGather && buf == kSendBuf) {
        buf = kRecvBuf;
        at += (size_t)r * a_.count;
      } else if (a_.kind == CollKind::ReduceScatter && buf == kRecvBuf) {
        buf = kSendBuf;
        at += (size_t)r * a_.count;
      } else if (a_.kind != CollKind::AllGather && a_.kind != CollKind::ReduceScatter && buf == kSendBuf) {
        buf = kRecvBuf;
      }
    }
    if (buf == kSendBuf) v = &st.send;
    if (buf == kRecvBuf) v = &st.recv;
    if (buf == kScratchBuf) v = &st.scratch;
    if (!v || at >= v->size()) {
      *err = Format("rank %d step %zu: buffer %d index %zu out of range (size %zu)", r, st.step, ref.buf, at,
                    v ? v->size() : 0);
      return nullptr;
    }
    return &(*v)[at];
  }

  // Whether op k of rank r's current step is done, for the ops that wait on it (Op::after): a
  // receive once it has every element, a send once it is in its mailbox (and taken, where sends
  // wait for their receiver), a local op at once (it ran when the step started).
  bool OpDone(const RankState& st, const Step& step, int r, size_t k) {
    const Op& op = step.ops[k];
    if (op.kind == OpKind::Recv || op.kind == OpKind::RecvReduce) return st.recvDone[k] == op.count;
    if (op.kind != OpKind::Send) return true;
    return SendDone(st, r, op, k);
  }

  // Whether send k (posted) is all in its channel: at once where channels are unbounded; where
  // sends wait for their receiver, once it has taken all of it; in a channel of channelElems_
  // elements, once what the receiver has not taken of it fits there (a message of
  // a_.bufferedBelow bytes or more only once taken: it may be read in one copy).
  bool SendDone(const RankState& st, int r, const Op& op, size_t k) {
    if (!st.posted[k]) return false;
    const size_t taken = Mail(r, op.peer).taken;
    const bool oneCopy = channelElems_ && a_.bufferedBelow && op.count * a_.elemSize >= a_.bufferedBelow;
    if (sendsWait_ || oneCopy) return taken >= st.sendEnd[k];
    return channelElems_ == 0 || st.sendEnd[k] <= taken + channelElems_;
  }

  // Puts the step's sends into their mailboxes in the order listed per peer (a connection is an
  // ordered stream): each as soon as the op it waits for is done (the executor reads its data only
  // then) and every earlier send to its peer is in.
  bool PostSends(int r, const Step& step, bool* progressed, std::string* err) {
    RankState& st = ranks_[r];
    if (st.unposted == 0) return true;
    bool someWait = false;  // an earlier send of this pass stays out (then check its peer)
    for (size_t k = 0; k < step.ops.size(); ++k) {
      const Op& op = step.ops[k];
      if (op.kind != OpKind::Send || st.posted[k]) continue;
      bool earlierWaits = false;
      for (size_t j = 0; someWait && j < k && !earlierWaits; ++j)
        earlierWaits = step.ops[j].kind == OpKind::Send && step.ops[j].peer == op.peer && !st.posted[j];
      if (earlierWaits || (op.after >= 0 && !OpDone(st, step, r, (size_t)op.after))) {
        someWait = true;
        continue;
      }
      Mailbox& box = Mail(r, op.peer);
      for (size_t i = 0; i < op.count; ++i) {
        Sym* s = Ref(r, op.src, i, err);
        if (!s) return false;
        box.sent.push_back(*s);
      }
      st.sendEnd[k] = box.sent.size();
      st.posted[k] = true;
      --st.unposted;
      ++messages_;
      *progressed = true;
    }
    return true;
  }

  bool Advance(int r, bool* progressed, std::string* err) {
    RankState& st = ranks_[r];
    const Step& step = st.sched.steps[st.step];
    if (!st.stepStarted) {
      for (const Op& op : step.ops)
        if (op.kind == OpKind::Send && op.after >= 0 &&
            (op.after >= (int)step.ops.size() || step.ops[op.after].kind == OpKind::Send)) {
          *err = Format("rank %d: a send waits on op %d of its step, which is not a receive", r, op.after);
          return false;
        }
      if (!CheckNoOverlap(r, step, err)) return false;
      st.recvDone.assign(step.ops.size(), 0);
      st.sendEnd.assign(step.ops.size(), 0);
      st.posted.assign(step.ops.size(), false);
      st.unposted = 0;
      for (const Op& op : step.ops) st.unposted += op.kind == OpKind::Send;
      for (size_t k = 0; k < step.ops.size(); ++k) {
        const Op& op = step.ops[k];
        if (op.kind == OpKind::Send) {
          if (op.peer < 0 || op.peer >= a_.nranks || op.peer == r) {
            *err = Format("rank %d sends to invalid peer %d", r, op.peer);
            return false;
          }
        } else if (!RunLocal(r, op, err)) {
          return false;
        }
      }
      if (!PostSends(r, step, progressed, err)) return false;
      st.stepStarted = true;
      *progressed = true;
    }
    bool complete = true;
    for (size_t k = 0; k < step.ops.size(); ++k) {
      const Op& op = step.ops[k];
      if (op.kind != OpKind::Recv && op.kind != OpKind::RecvReduce) continue;
      if (op.after >= 0 && !OpDone(st, step, r, (size_t)op.after)) {
        complete = false;  // waits for the op it depends on
        continue;
      }
      // As in the executor, receives from one peer take its messages in the order listed: a
      // receive waits while an earlier one from the same peer is unfinished.
      bool earlierFromPeer = false;
      for (size_t j = 0; j < k && !earlierFromPeer; ++j)
        earlierFromPeer = (step.ops[j].kind == OpKind::Recv || step.ops[j].kind == OpKind::RecvReduce) &&
                          step.ops[j].peer == op.peer && st.recvDone[j] < step.ops[j].count;
      if (earlierFromPeer) {
        complete = false;
        continue;
      }
      Mailbox& box = Mail(op.peer, r);
      while (st.recvDone[k] < op.count && box.taken < box.sent.size()) {
        size_t i = st.recvDone[k]++;
        const Sym in = box.sent[box.taken++];
        Sym* dst = Ref(r, op.dst, i, err);
        if (!dst) return false;
        if (op.kind == OpKind::Recv) {
          *dst = in;
        } else {
          Sym* local = Ref(r, op.src, i, err);
          if (!local) return false;
          *dst = Combine(*local, in);
        }
        *progressed = true;
      }
      complete = complete && st.recvDone[k] == op.count;
    }
    if (!PostSends(r, step, progressed, err)) return false;
    // Single copy (transports/shm/single_copy.h): a send completes only once its receiver has
    // taken every element of it; in a bounded channel, once it fits (SendDone).
    for (size_t k = 0; k < step.ops.size(); ++k)
      if (step.ops[k].kind == OpKind::Send && !SendDone(st, r, step.ops[k], k)) complete = false;
    if (complete) {
      ++st.step;
      st.stepStarted = false;
      *progressed = true;  // a step whose sends were taken completes without moving anything itself
    }
    return true;
  }

  static Sym TreeOf(const std::vector<Sym>& in, int lo, int hi) {
    if (hi - lo == 1) return in[lo];
    int mid = lo + (hi - lo + 1) / 2;
    return Combine(TreeOf(in, lo, mid), TreeOf(in, mid, hi));
  }

  bool RunLocal(int r, const Op& op, std::string* err) {
    for (size_t i = 0; i < op.count; ++i) {
      if (op.kind == OpKind::Copy) {
        Sym* s = Ref(r, op.src, i, err);
        Sym* d = Ref(r, op.dst, i, err);
        if (!s || !d) return false;
        *d = *s;
      } else if (op.kind == OpKind::Divide) {
        Sym* d = Ref(r, op.dst, i, err);
        if (!d) return false;
        d->divides++;
      } else if (op.kind == OpKind::Reduce) {
        Sym* x = Ref(r, op.src, i, err);
        Sym* y = Ref(r, op.own, i, err);
        Sym* d = Ref(r, op.dst, i, err);
        if (!x || !y || !d) return false;
        *d = Combine(*x, *y);
      } else if (op.kind == OpKind::TreeReduce) {
        std::vector<Sym>& in = treeInputs_;
        in.resize(a_.nranks);
        for (int q = 0; q < a_.nranks; ++q) {
          Sym* p = q == r ? Ref(r, op.own, i, err) : Ref(r, {op.src.buf, op.src.offset + q * op.stride}, i, err);
          if (!p) return false;
          in[q] = *p;
        }
        Sym* d = Ref(r, op.dst, i, err);
        if (!d) return false;
        *d = TreeOf(in, 0, a_.nranks);  // as kernels/host/tree_reduce.cc evaluates it
      }
    }
    return true;
  }

  // Within one step ops progress concurrently, so memory one op writes must not be touched by any
  // other op of the step.
  bool CheckNoOverlap(int r, const Step& step, std::string* err) {
    auto range = [&](BufRef ref, size_t n) {
      std::string e;
      Sym* b = n ? Ref(r, ref, 0, &e) : nullptr;
      return std::pair<Sym*, Sym*>(b, b ? b + n : nullptr);
    };
    // At most three buffers per op, kept off the heap: this runs for every pair of ops of a step.
    struct Refs {
      BufRef ref[3];
      int n = 0;
      void Add(BufRef r) { ref[n++] = r; }
    };
    auto touches = [this](const Op& o) {
      Refs refs;
      // A staged send's source is read when the step starts, before any other op of it runs.
      if (o.kind != OpKind::Recv && o.kind != OpKind::Divide && !SendIsStaged(o, a_.elemSize)) refs.Add(o.src);
      if (o.kind != OpKind::Send) refs.Add(o.dst);
      if (o.kind == OpKind::Reduce) refs.Add(o.own);
      return refs;
    };
    // Whether op x starts only after op y has completed: `after` links chain (the executor starts an
    // op once the one it names is done, which itself started only after its own).
    auto follows = [&](size_t x, size_t y) {
      for (int k = step.ops[x].after, hops = 0; k >= 0 && hops < (int)step.ops.size(); k = step.ops[k].after, ++hops)
        if (k == (int)y) return true;
      return false;
    };
    for (size_t i = 0; i < step.ops.size(); ++i) {
      const Op& w = step.ops[i];
      if (w.kind == OpKind::Send || w.kind == OpKind::TreeReduce || w.count == 0) continue;
      auto d = range(w.dst, w.count);
      for (size_t j = 0; j < step.ops.size(); ++j) {
        if (i == j || step.ops[j].kind == OpKind::TreeReduce) continue;
        if (follows(i, j) || follows(j, i)) continue;  // ordered, not concurrent
        const Refs refs = touches(step.ops[j]);
        for (int t = 0; t < refs.n; ++t) {
          auto x = range(refs.ref[t], step.ops[j].count);
          if (d.first && x.first && d.first < x.second && x.first < d.second) {
            *err = Format("rank %d step %zu: op %zu writes memory that op %zu of the same step uses", r,
                          ranks_[r].step, i, j);
            return false;
          }
        }
      }
    }
    return true;
  }

  std::string Blocked() {
    std::string s;
    for (int r = 0; r < a_.nranks; ++r)
      if (ranks_[r].step < ranks_[r].sched.steps.size()) s += Format(" rank %d at step %zu;", r, ranks_[r].step);
    return s;
  }

  std::string CheckOutputs() {
    const int N = a_.nranks;
    const size_t c = a_.count;
    const bool reduces = a_.kind == CollKind::AllReduce || a_.kind == CollKind::Reduce ||
                         a_.kind == CollKind::ReduceScatter;
    Sym full;
    for (int q = 0; q < N; ++q) full = q == 0 ? Input(0, 0) : Combine(full, Input(q, 0));
    full.origin = N == 1 ? 0 : -1;
    full.tree = CanonicalTree(0, N);
    full.divides = (a_.op == tcclAvg && N > 1) ? 1 : 0;
    for (int r = 0; r < N; ++r) {
      if (a_.kind == CollKind::Reduce && r != a_.root) continue;
      std::string e;
      size_t outN = a_.kind == CollKind::AllGather || a_.kind == CollKind::AllToAll ? N * c : c;
      for (size_t i = 0; i < outN; ++i) {
        Sym* got = Ref(r, {kRecvBuf, 0}, i, &e);
        if (!got) return e;
        Sym want;
        if (reduces) {
          want = full;
          want.elem = (int64_t)(a_.kind == CollKind::ReduceScatter ? r * c + i : i);
          if (N == 1) want.divides = 0;
        } else if (a_.kind == CollKind::Broadcast) {
          want = Input(a_.root, (int64_t)i);
        } else if (a_.kind == CollKind::AllGather) {
          want = Input((int)(i / c), (int64_t)(i % c));
        } else {  // all-to-all: block j of rank r's output is block r of rank j's input
          want = Input((int)(i / c), (int64_t)(r * c + i % c));
        }
        // For avg at N=1 no division is needed (x/1 == x); accept either.
        if (a_.op == tcclAvg && N == 1) got->divides = 0;
        // Only canonical algorithms promise the canonical tree; the others must still combine
        // every rank exactly once (checked by mask and count).
        if (reduces && !checkTree_) want.tree = got->tree;
        if (!(*got == want))
          return Format("%s N=%d count=%zu%s: rank %d output[%zu] = %s, expected %s", CollName(a_.kind), N, c,
                        ranks_[r].inPlace ? " in-place" : "", r, i, Show(*got).c_str(), Show(want).c_str());
      }
    }
    return "";
  }

  CollArgs a_;
  std::vector<RankState> ranks_;
  bool checkTree_;
  // What one rank sent another, in order: the elements ever sent, and how many the receiver took
  // (a send of single copy completes once `taken` passes its end).
  struct Mailbox {
    std::vector<Sym> sent;
    size_t taken = 0;
  };
  Mailbox& Mail(int from, int to) { return mail_[(size_t)from * a_.nranks + to]; }
  std::vector<Mailbox> mail_;  // nranks x nranks, by (from, to)
  std::vector<Sym> treeInputs_;  // RunLocal's TreeReduce operands, reused
  bool sendsWait_ = false;
  size_t channelElems_ = 0;  // what a channel holds (0: unbounded)
  size_t messages_ = 0;
};

}  // namespace

SimResult Simulate(const AlgorithmInfo& alg, CollArgs a, bool sendsWaitForReceiver,
                   const std::vector<bool>& inPlaceRanks, size_t channelBytes) {
  a.kind = alg.coll;
  if (sendsWaitForReceiver) a.bufferedBytes = a.bufferedBelow = 0;  // no buffering, as the schedules are told
  if (!inPlaceRanks.empty() && inPlaceRanks.size() != (size_t)a.nranks) {
    SimResult bad;
    bad.ok = false;
    bad.error = Format("inPlaceRanks has %zu entries for %d ranks", inPlaceRanks.size(), a.nranks);
    return bad;
  }
  Sim sim(alg, a, sendsWaitForReceiver, inPlaceRanks, channelBytes ? channelBytes : a.bufferedBytes);
  return sim.Run();
}

}  // namespace tccl
