#include "exec/executor.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <optional>

#include "core/deadline.h"
#include "kernels/host/copy.h"
#include "kernels/host/dtype.h"
#include "kernels/host/tree_reduce.h"

namespace tccl {

namespace {

struct ReduceCtx {
  unsigned char* dst;
  const unsigned char* local;
  ReduceFn fn;
  size_t elemSize;
};

void ConsumeReduce(void* ctx, const void* frag, size_t offset, size_t bytes) {
  auto* c = static_cast<ReduceCtx*>(ctx);
  c->fn(c->dst + offset, c->local + offset, frag, bytes / c->elemSize);
}

// The same, stored past the cache (RecvSink::consumeStreamed): reduced 4 KiB at a time into a
// bounce buffer that stays in L1, then streamed out. The kernels store through the cache, which
// reads each output line from memory first: wasted on an output nothing reads again.
void ConsumeReduceStreamed(void* ctx, const void* frag, size_t offset, size_t bytes) {
  auto* c = static_cast<ReduceCtx*>(ctx);
  constexpr size_t kBounce = 4096;  // a multiple of every element size
  alignas(64) unsigned char bounce[kBounce];
  const auto* f = static_cast<const unsigned char*>(frag);
  for (size_t at = 0; at < bytes; at += kBounce) {
    const size_t n = std::min(kBounce, bytes - at);
    c->fn(bounce, c->local + offset + at, f + at, n / c->elemSize);
    StreamCopy(c->dst + offset + at, bounce, n);
  }
}

// A receive-and-reduce whose result a send of the same step sends on to the same peer
// (Op::forwardTo), forwarded: each piece is reduced straight into the send's window in the
// connection's buffer (Connection::SendWindow) and copied on from there into its place while it
// is still in L1, so the place is stored without being read first (streamed where it is final and
// the buffers outgrow the cache) and the send never reads it back. 2 KiB pieces: a piece, its
// operands and its copy stay in L1. A model of the 2-rank two-shot with shared rings
// (perf/two_shot_model_probe.c) ran 256 MiB in 35-39 ms so against 44-46 reducing into the output
// and sending from there; through a 16 KiB bounce buffer, or in 16 KiB pieces read back from L2,
// the gain was gone (docs/performance.md, "The reduced half written straight into the send").
struct ForwardCtx {
  ReduceCtx reduce;
  unsigned char* window;  // where the send's byte `base` goes
  size_t base;
  // The window is written with streaming stores (Connection::SendWindow's *stream): each piece is
  // reduced into a bounce buffer in L1 and streamed from there into both places.
  bool streamWindow;
};

void ForwardReduced(ForwardCtx* c, const void* frag, size_t offset, size_t bytes, bool stream) {
  constexpr size_t kPiece = 2048;  // a multiple of every element size
  alignas(64) unsigned char bounce[kPiece];
  const auto* f = static_cast<const unsigned char*>(frag);
  const ReduceCtx& r = c->reduce;
  unsigned char* w = c->window + (offset - c->base);
  for (size_t at = 0; at < bytes; at += kPiece) {
    const size_t n = std::min(kPiece, bytes - at);
    unsigned char* piece = c->streamWindow ? bounce : w + at;
    r.fn(piece, r.local + offset + at, f + at, n / r.elemSize);
    if (c->streamWindow) StreamCopy(w + at, piece, n);
    if (stream)
      StreamCopy(r.dst + offset + at, piece, n);
    else
      CopyBytes(r.dst + offset + at, piece, n);
  }
}
void ConsumeForward(void* ctx, const void* frag, size_t offset, size_t bytes) {
  ForwardReduced(static_cast<ForwardCtx*>(ctx), frag, offset, bytes, false);
}
void ConsumeForwardStreamed(void* ctx, const void* frag, size_t offset, size_t bytes) {
  ForwardReduced(static_cast<ForwardCtx*>(ctx), frag, offset, bytes, true);
}

unsigned char* Ptr(const std::vector<void*>& bufs, BufRef r, size_t elemSize) {
  return static_cast<unsigned char*>(bufs[r.buf]) + r.offset * elemSize;
}

std::atomic<uint64_t> g_streamedCopyBytes{0};
std::atomic<uint64_t> g_forwardedBytes{0};

// A local copy: CopyBytes where the ranges are apart (the common case), memmove where they overlap.
// Into a final place whose lines nothing reads again (`stream`), streaming stores: ordinary stores
// read each line from memory before writing it, and glibc's memcpy streams only from its own
// threshold (3/4 of the cache size it reads from CPUID: 192 MiB on the development VM, whose
// hypervisor reports a 256 MiB L3; below it, two threads copying 128 MiB each at once ran at 3.7
// GB/s per thread against 5.6 streamed). Fenced, so that the operation's end, which another thread
// may see, is not visible before the data.
void MoveBytes(unsigned char* d, const unsigned char* s, size_t n, bool stream) {
  if (d + n > s && s + n > d) {
    memmove(d, s, n);
  } else if (stream && CanStreamCopy()) {
    StreamCopy(d, s, n);
    StreamFence();
    g_streamedCopyBytes.fetch_add(n, std::memory_order_relaxed);
  } else {
    CopyBytes(d, s, n);
  }
}

void RunLocal(const Op& op, const std::vector<void*>& bufs, const ExecKernels& k, const ExecEnv& env,
              bool sharedScratch) {
  const size_t es = k.elemSize;
  const int rank = env.rank, nranks = env.nranks;
  switch (op.kind) {
    case OpKind::Copy:
      // A staging copy (into shared scratch from another buffer, so never overlapping).
      if (sharedScratch && env.copyToSharedScratch && op.dst.buf == kScratchBuf && op.src.buf != kScratchBuf)
        env.copyToSharedScratch(env.copyCtx, Ptr(bufs, op.dst, es), Ptr(bufs, op.src, es), op.count * es);
      else
        MoveBytes(Ptr(bufs, op.dst, es), Ptr(bufs, op.src, es), op.count * es, op.finalDst && k.streamFinalCopies);
      break;
    case OpKind::Divide:
      k.divide(Ptr(bufs, op.dst, es), op.count, nranks);
      break;
    case OpKind::Reduce:
      k.reduce(Ptr(bufs, op.dst, es), Ptr(bufs, op.src, es), Ptr(bufs, op.own, es), op.count);
      break;
    case OpKind::TreeReduce: {
      std::vector<const void*> in(nranks);
      for (int i = 0; i < nranks; ++i)
        in[i] = i == rank ? Ptr(bufs, op.own, es) : Ptr(bufs, {op.src.buf, op.src.offset + i * op.stride}, es);
      TreeReduce(in.data(), nranks, Ptr(bufs, op.dst, es), op.count, es, k.reduce);
      break;
    }
    default:
      break;
  }
}

bool IsLocal(OpKind k) {
  return k == OpKind::Copy || k == OpKind::Divide || k == OpKind::TreeReduce || k == OpKind::Reduce;
}

}  // namespace

// Every message is preceded by its tag. Payloads up to kInlineBytes travel in their tag's message:
// both ends know every size, so they agree on the framing. The extra copy through the staging
// costs less than a second message (its own ring update and cache-line transfers): measured at
// 2 ranks, 8 KiB all-gather 2.41 -> 1.38 us and in-place all-reduce 2.56 -> 1.90 us going from
// 1 KiB to 8 KiB, no size slower. Schedules rely on such a send's data being copied when its step
// starts (kStagedSendBytes, algorithms/schedule.h).
constexpr size_t kTag = sizeof(OpTag);
constexpr size_t kInlineBytes = kStagedSendBytes;

void PrepareSchedule(Schedule* s, size_t elemSize) {
  // Only the first unfinished message per (peer, direction) may move: a message waits for the one
  // before it on its stream, and that one finished means every earlier one did (it could only move
  // once its own predecessor had finished). Zero-byte messages are not on the wire, so they stay
  // out of the chain. Linking each message to its predecessor keeps a pass linear in the step's
  // ops; scanning the earlier ops for every op cost K^2 per pass for K messages to one peer.
  //
  // Staging: a message's tag, and a small payload behind it (a send's is copied in when the step
  // starts, a receive's arrives there), at its own place, so a step's staging is what its small
  // messages carry plus a tag each (a fixed slot of tag + 8 KiB per message took 846 MB for a
  // group of 100000 sends of 8 B). A large send's tag is sent from the stack.
  std::vector<int> last;  // per (peer, direction): the last message seen so far in this step
  s->stagingBytes = 0;
  for (Step& step : s->steps) {
    last.clear();
    size_t staging = 0;
    for (Op& op : step.ops) op.forwardTo = -1;
    for (size_t i = 0; i < step.ops.size(); ++i) {
      Op& op = step.ops[i];
      op.prevOnStream = -1;
      op.stageAt = 0;
      if (op.kind == OpKind::Send && op.after >= 0) {
        Op& from = step.ops[op.after];
        if (from.kind == OpKind::RecvReduce && from.peer == op.peer && from.count == op.count &&
            from.dst.buf == op.src.buf && from.dst.offset == op.src.offset && op.count * elemSize > kInlineBytes)
          from.forwardTo = (int)i;
      }
      if (IsLocal(op.kind) || op.count == 0) continue;
      const size_t key = 2 * (size_t)op.peer + (op.kind == OpKind::Send);
      if (last.size() <= key) last.resize(key + 1, -1);
      op.prevOnStream = last[key];
      last[key] = (int)i;
      const size_t total = op.count * elemSize;
      const bool inl = total <= kInlineBytes;
      if (op.kind == OpKind::Send && !inl) continue;
      op.stageAt = staging;
      staging += (kTag + (inl ? total : 0) + 7) & ~(size_t)7;  // 8-byte aligned
    }
    s->stagingBytes = std::max(s->stagingBytes, staging);
  }
  s->preparedForElemSize = elemSize;
}

ExecKernels KernelsFor(tcclDataType_t dt, tcclRedOp_t op) {
  ExecKernels k;
  k.elemSize = DtypeSize(dt);
  k.reduce = GetReduceFn(dt, op);
  k.divide = GetDivideFn(dt);
  return k;
}

uint64_t StreamedCopyBytes() { return g_streamedCopyBytes.load(std::memory_order_relaxed); }
uint64_t ForwardedBytes() { return g_forwardedBytes.load(std::memory_order_relaxed); }

namespace {

// A small send's tag and payload, copied into its place in the staging (Op::stageAt).
void StageSend(unsigned char* at, const OpTag& tag, const unsigned char* src, size_t bytes) {
  // The tag as it is, then its byte count over it: patching a copy of the tag first made the
  // copy's 16-byte loads wait on the 8-byte store (IsTagWithBytes, op_tag.h).
  memcpy(at, &tag, kTag);
  const uint64_t messageBytes = bytes;
  memcpy(at + offsetof(OpTag, bytes), &messageBytes, sizeof messageBytes);
  CopyBytes(at + kTag, src, bytes);
}

// Sets `sink` up to forward what the receive-and-reduce op i reduces to its send (Op::forwardTo)
// where that is possible now: the send is next on its stream, its tag is out (sent here), it has
// sent exactly what the receive delivered, and its connection offers a window. Otherwise `sink`
// stays a plain receive-and-reduce into the result's place, from which the send sends once it is
// done (where a plain receive took part of a slice, it takes the rest too).
Status StartForward(const Op* ops, size_t i, size_t* doneAt, size_t* tagDoneAt, const ExecKernels& k,
                    const ExecEnv& env, Connection* c, ForwardCtx* f, RecvSink* sink, std::vector<Connection*>* moved) {
  const Op& op = ops[i];
  const size_t j = (size_t)op.forwardTo;
  const Op& send = ops[j];
  if (doneAt[j] != doneAt[i]) return Status::Ok();
  if (send.prevOnStream >= 0 && doneAt[send.prevOnStream] != SIZE_MAX) return Status::Ok();
  const size_t total = send.count * k.elemSize;
  if (tagDoneAt[j] < kTag) {
    OpTag want = env.tag;
    want.bytes = total;
    size_t n = 0;
    TCCL_RETURN_IF_ERROR(c->TrySend(&want, tagDoneAt[j], kTag, &n));
    tagDoneAt[j] += n;
    if (n) moved->push_back(c);
    if (tagDoneAt[j] < kTag) return Status::Ok();
  }
  size_t room = 0;
  bool streamWindow = false;
  void* window = c->SendWindow(doneAt[j], total, &room, &streamWindow);
  room -= room % k.elemSize;
  if (!window || room == 0) return Status::Ok();
  *f = {*static_cast<const ReduceCtx*>(sink->ctx), static_cast<unsigned char*>(window), doneAt[j], streamWindow};
  sink->consume = &ConsumeForward;
  sink->consumeStreamed = &ConsumeForwardStreamed;
  sink->finalDst = op.finalDst;
  sink->ctx = f;
  sink->maxBytes = room;
  return Status::Ok();
}

// Whether a message op must wait for an earlier op of its step: the one it comes after
// (Op::after) or its stream's previous message (streams are ordered).
inline bool WaitsForEarlierOp(const Op& op, const size_t* doneAt) {
  return (op.after >= 0 && doneAt[op.after] != SIZE_MAX) || (op.prevOnStream >= 0 && doneAt[op.prevOnStream] != SIZE_MAX);
}

// The bytes of the next transport message a receive waits for while it has taken none of it (the
// tag, with an inline payload; or a large payload after its tag), else 0.
inline size_t UnstartedRecvBytes(const Op& op, size_t tagDone, size_t done, size_t elemSize) {
  const size_t total = op.count * elemSize;
  const bool inl = total <= kInlineBytes;
  if (tagDone == 0) return inl ? kTag + total : kTag;
  return !inl && tagDone == kTag && done == 0 ? total : 0;
}

}  // namespace

Status Execute(const Schedule& s, const std::vector<void*>& bufs, const ExecKernels& k, ExecEnv& env,
               FunctionRef<std::string()> describe) {
  if (s.preparedForElemSize != k.elemSize) {
    Schedule prepared = s;
    PrepareSchedule(&prepared, k.elemSize);
    return Execute(prepared, bufs, k, env, describe);
  }
  // The deadline starts at the first wait (a clock read saved on calls that never wait; the
  // difference is the few microseconds before it).
  std::optional<Deadline> deadline;
  const size_t es = k.elemSize;
  // Per-pass bookkeeping, reused across calls on this thread (no allocation on the fast path).
  struct Scratch {
    std::vector<size_t> done, tagDone;
    std::vector<ReduceCtx> rctx;
    std::vector<ForwardCtx> fctx;
    std::vector<pollfd> sockets;
    std::vector<Connection*> moved;  // connections touched in this pass: published once (a no-op unless due)
    std::vector<unsigned char> staging;  // per message: tag + inline payload, at Op::stageAt
    std::vector<int> waitingOn;          // peers of the unfinished messages, for the health check
  };
  static thread_local Scratch scratch;
  // However this returns, peers stop ringing for this rank.
  struct WaitScope {
    Waiter* w;
    ~WaitScope() { w->Done(); }
  } waitScope{env.waiter};
  auto& [done, tagDone, rctx, fctx, sockets, moved, staging, waitingOn] = scratch;
  // A message op's transport error, with the operation and the peer.
  auto failed = [&](const Op& op, const Status& st) {
    env.failedPeer = op.peer;
    return Status(st.code(), describe() + ": " + (op.kind == OpKind::Send ? "sending to " : "receiving from ") +
                                 env.describePeer(op.peer) + " failed: " + st.message());
  };
  if (staging.size() < s.stagingBytes) staging.resize(s.stagingBytes);
  unsigned char* const stagingBase = staging.data();
  const size_t nsteps = s.steps.size();
  for (size_t si = 0; si < nsteps; ++si) {
    const std::vector<Op>& ops = s.steps[si].ops;
    // The step's sizes and arrays in locals: through the vectors, every store to an op's counters
    // made the compiler reload each vector's bounds (their size() was 5% of a small call's path).
    const size_t nops = ops.size();
    // Sized up only (kept across calls); each op's entries are set in the loop below, and a
    // reduce context only where an op reduces (stores are what a small call's time is made of).
    if (done.size() < nops) {
      done.resize(nops);
      tagDone.resize(nops);
      rctx.resize(nops);
      fctx.resize(nops);
    }
    size_t* const doneAt = done.data();
    size_t* const tagDoneAt = tagDone.data();
    const Op* const opAt = ops.data();
    size_t remaining = 0;
    // Local ops run once the first pass has posted the step's messages: a peer reading this
    // rank's buffer in one copy (single_copy.h) then works while this rank copies locally (a
    // broadcast root's own copy overlaps its receivers' reads). Ops of a step touch disjoint
    // memory (the simulator checks it), so the order within the step is free.
    bool localsPending = false;
    for (size_t i = 0; i < nops; ++i) {
      doneAt[i] = 0;
      tagDoneAt[i] = 0;
      if (IsLocal(opAt[i].kind)) {
        localsPending = true;
      } else if (opAt[i].count == 0) {
        doneAt[i] = SIZE_MAX;  // zero-byte messages are skipped by both sides
      } else {
        if (opAt[i].kind == OpKind::RecvReduce)
          rctx[i] = {Ptr(bufs, opAt[i].dst, es), Ptr(bufs, opAt[i].src, es), k.reduce, es};
        const size_t total = opAt[i].count * es;
        if (SendIsStaged(opAt[i], es)) StageSend(stagingBase + opAt[i].stageAt, env.tag, Ptr(bufs, opAt[i].src, es), total);
        ++remaining;
      }
    }
    // A peer may finish its part, leave (tcclCommDestroy, exit) and be seen gone before this rank
    // has read the messages it left in shared memory. So a peer found gone ends the step only
    // after one more pass that moves nothing: that pass sees everything the peer wrote.
    bool peerGone = false;
    while (remaining > 0 || localsPending) {
      uint32_t snap = env.waiter->Arm();
      bool progressed = false;
      sockets.clear();
      moved.clear();
      // Only the first unfinished op per (peer, direction) may move: streams are ordered.
      for (size_t i = 0; i < nops; ++i) {
        if (doneAt[i] == SIZE_MAX || IsLocal(opAt[i].kind)) continue;
        const Op& op = opAt[i];
        bool sending = op.kind == OpKind::Send;
        if (WaitsForEarlierOp(op, doneAt)) continue;
        Connection* c = env.conns[op.peer];
        size_t total = op.count * es;
        size_t n = 0;
        Status st;
        // First the tag, then the payload; a small payload travels in the tag's message (one
        // ring update and one wake-up instead of two), staged with the tag in `staging`.
        const bool inl = total <= kInlineBytes;
        const size_t head = inl ? kTag + total : kTag;
        // A send of what an op of its step wrote (Op::after) is staged now that the op is done.
        if (sending && inl && op.after >= 0 && tagDoneAt[i] == 0)
          StageSend(stagingBase + op.stageAt, env.tag, Ptr(bufs, op.src, es), total);
        if (tagDoneAt[i] < head) {
          // (Only a large send has no place here: it sends its tag from `want`. A schedule of large
          // sends alone leaves `staging` empty, so no element of it is named.)
          unsigned char* stage = stagingBase + op.stageAt;
          const size_t before = tagDoneAt[i];
          if (sending && inl) {
            st = c->TrySend(stage, before, head, &n);
          } else if (sending) {
            OpTag want = env.tag;
            want.bytes = total;
            st = c->TrySend(&want, before, kTag, &n);
          } else {
            RecvSink sink;
            sink.direct = stage;
            st = c->TryRecv(sink, before, head, &n);
          }
          tagDoneAt[i] += n;
          // The tag is checked as soon as it is in, before any payload byte is used.
          if (st.ok() && !sending && before < kTag && tagDoneAt[i] >= kTag) {
            if (!IsTagWithBytes(stage, env.tag, total)) {
              OpTag got, want = env.tag;
              want.bytes = total;
              memcpy(&got, stage, kTag);
              return InvalidUsage("%s: mismatched calls across ranks: %s", describe().c_str(),
                                  DescribeMismatch(got, want, env.describePeer(op.peer)).c_str());
            }
          }
          if (n) moved.push_back(c);
          progressed |= n > 0;
          n = 0;
          if (st.ok() && inl && tagDoneAt[i] == head) {
            if (op.kind == OpKind::Recv) CopyBytes(Ptr(bufs, op.dst, es), stage + kTag, total);
            if (op.kind == OpKind::RecvReduce) ConsumeReduce(&rctx[i], stage + kTag, 0, total);
            doneAt[i] = SIZE_MAX;
            --remaining;
            continue;
          }
        }
        if (st.ok() && tagDoneAt[i] == kTag && !inl) {
          if (sending) {
            st = c->TrySend(Ptr(bufs, op.src, es), doneAt[i], total, &n);
          } else {
            RecvSink sink;
            sink.granularity = es;
            if (op.kind == OpKind::Recv) {
              sink.direct = Ptr(bufs, op.dst, es);
              sink.finalDst = op.finalDst;
            } else if (op.forwardTo < 0) {
              sink.consume = &ConsumeReduce;
              sink.consumeStreamed = &ConsumeReduceStreamed;
              sink.finalDst = op.finalDst;
              sink.ctx = &rctx[i];
            } else {
              // The send reads the result back from `dst` unless each piece is forwarded to it.
              sink.consume = &ConsumeReduce;
              sink.ctx = &rctx[i];
              st = StartForward(opAt, i, doneAt, tagDoneAt, k, env, c, &fctx[i], &sink, &moved);
            }
            if (st.ok()) st = c->TryRecv(sink, doneAt[i], total, &n);
            if (st.ok() && sink.ctx == &fctx[i] && n) {
              const int j = op.forwardTo;
              if (fctx[i].streamWindow) StreamFence();  // the window's stores, before the peer may read them
              c->SendWritten(n);
              g_forwardedBytes.fetch_add(n, std::memory_order_relaxed);
              doneAt[j] += n;
              if (doneAt[j] == total) {
                doneAt[j] = SIZE_MAX;
                --remaining;
              }
            }
          }
        }
        if (!st.ok()) {
          for (Connection* m : moved) m->Publish();
          return failed(op, st);
        }
        if (n) {
          progressed = true;
          moved.push_back(c);
          doneAt[i] += n;
          if (doneAt[i] == total) {
            doneAt[i] = SIZE_MAX;
            --remaining;
          }
        } else if (c->PollFd() >= 0) {
          sockets.push_back({c->PollFd(), (short)(sending ? POLLOUT : POLLIN), 0});
        } else {
          // No payload moved, but the connection may still owe its peer a wake-up: a single-copy
          // header (single_copy.h) or ring space handed back. Publish rings only if so.
          moved.push_back(c);
        }
      }
      for (Connection* c : moved) c->Publish();
      if (localsPending) {
        localsPending = false;
        for (size_t i = 0; i < nops; ++i)
          if (IsLocal(opAt[i].kind)) {
            RunLocal(opAt[i], bufs, k, env, s.sharedScratch);
            doneAt[i] = SIZE_MAX;
          }
        continue;
      }
      if (progressed) {
        env.waiter->Progressed();
        continue;
      }
      if (env.aborted && env.aborted->load(std::memory_order_relaxed))
        return InvalidUsage("%s: the communicator was aborted", describe().c_str());
      env.waited = true;
      if (!peerGone && !env.waiter->ChecksDue()) {
        env.waiter->Idle(snap, sockets);
        continue;
      }
      // A receive that has taken nothing yet may wait where the peer's next message is not
      // (Connection::CheckUnstartedRecv): a mismatched call, told now rather than at the deadline.
      for (size_t i = 0; i < nops; ++i) {
        const Op& op = opAt[i];
        if (doneAt[i] == SIZE_MAX || IsLocal(op.kind) || op.kind == OpKind::Send || WaitsForEarlierOp(op, doneAt)) continue;
        const size_t bytes = UnstartedRecvBytes(op, tagDoneAt[i], doneAt[i], es);
        if (!bytes) continue;
        const Status st = env.conns[op.peer]->CheckUnstartedRecv(bytes);
        if (!st.ok()) return failed(op, st);
      }
      if (env.health) {
        // Only the peers this step still waits for: one that finished with us may have left.
        waitingOn.clear();
        for (size_t i = 0; i < nops; ++i)
          if (doneAt[i] != SIZE_MAX && !IsLocal(opAt[i].kind)) waitingOn.push_back(opAt[i].peer);
        Status h = env.health(waitingOn);
        if (!h.ok()) {
          if (!peerGone) {
            peerGone = true;
            continue;
          }
          return Status(h.code(), describe() + ": " + h.message());
        }
      }
      if (!deadline) deadline = Deadline::After(env.timeoutSec);
      if (deadline->Expired()) {
        std::string waiting;
        for (size_t i = 0; i < nops; ++i)
          if (doneAt[i] != SIZE_MAX)
            waiting += std::string(waiting.empty() ? "" : ", ") +
                       (opAt[i].kind == OpKind::Send ? "send to " : "receive from ") + env.describePeer(opAt[i].peer);
        std::string diag = env.diagnose ? env.diagnose() : "";
        return Timeout("%s: not complete after TCCL_TIMEOUT=%.0f s (step %zu of %zu), still waiting on %s%s%s",
                       describe().c_str(), env.timeoutSec, si + 1, s.steps.size(), waiting.c_str(),
                       diag.empty() ? "" : "; ", diag.c_str());
      }
      env.waiter->Idle(snap, sockets);
    }
    // Claim what the next sends will write (Connection::PrepareNextSend) now that the step is
    // done: not earlier, where the claims would queue ahead of the reads of the peers' lines that
    // this rank is waiting for (measured slower at 2 ranks, docs/performance.md).
    for (size_t i = 0; i < nops; ++i)
      if (opAt[i].kind == OpKind::Send && opAt[i].count) env.conns[opAt[i].peer]->PrepareNextSend();
  }
  return Status::Ok();
}

}  // namespace tccl
