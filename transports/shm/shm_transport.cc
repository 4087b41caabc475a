#include "transports/shm/shm_transport.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>

#include <unistd.h>

#include "core/asymmetric_fence.h"
#include "core/cycle_clock.h"
#include "core/log.h"
#include "core/race_annotations.h"
#include "kernels/host/copy.h"
#include "topology/cache_size.h"
#include "transports/shm/ring_copy_in.h"
#include "transports/shm/shm_channel.h"

namespace tccl {

namespace {

std::atomic<uint64_t> g_ringRestarts{0};
std::atomic<uint64_t> g_streamedReceiveBytes{0};
std::atomic<size_t> g_windowLimit{0};
std::atomic<unsigned> g_windowNone{0}, g_windowCalls{0};
std::atomic<bool> g_windowStream{false};

// After n bytes of a receive were stored into their final place past the cache: the fence, so that
// no later store (the operation's end, seen by another thread) is visible before them, and the count.
void FenceStreamedOutput(size_t n) {
  StreamFence();
  g_streamedReceiveBytes.fetch_add(n, std::memory_order_relaxed);
}
// A receive into its final place, past the cache (ShmOperation::streamOutputs).
void StreamOutput(void* dst, const void* src, size_t n) {
  StreamCopy(dst, src, n);
  FenceStreamedOutput(n);
}

struct FailureRecord {
  std::atomic<uint32_t> state;  // 0: none, 1: being written, 2: written (the segment starts zeroed)
  int32_t reporter;
  char reason[1016];
};
constexpr size_t kHeaderBytes = sizeof(FailureRecord);
static_assert(kHeaderBytes % 64 == 0, "doorbells stay cache-line aligned");

class ShmConnection : public Connection {
 public:
  ShmConnection(ShmChannel* out, ShmChannel* in, size_t cap, const ShmOperation* operation, Doorbell* peerBell,
                const SingleCopyConfig* sc, int peer, bool eachRankHasACore)
      : out_(out),
        in_(in),
        cap_(cap),
        peerBell_(peerBell),
        sc_(sc),
        peer_(peer),
        operation_(operation),
        copyIn_(&out->readCost, eachRankHasACore),
        llOut_(out->ll),
        llIn_(in->ll) {
    sendHead_ = out_->head.load(std::memory_order_relaxed);
    recvTail_ = in_->tail.load(std::memory_order_relaxed);
    lastStart_ = sendHead_;
    copiesSent_ = out_->copied.load(std::memory_order_relaxed);
    copiesRead_ = in_->copied.load(std::memory_order_relaxed);
  }

  Status TrySend(const void* data, size_t done, size_t total, size_t* taken) override {
    lastSendLL_ = total <= kLLMaxBytes;
    if (lastSendLL_) {
      *taken = llOut_.Send(&out_->ll, data, done, total);
      ringDue_ |= *taken > 0;
      return Status::Ok();
    }
    if (IsLarge(total)) return TrySendLarge(data, done, total, taken);
    SendBytes(data, done, total, taken);
    return Status::Ok();
  }

  Status TryRecv(const RecvSink& sink, size_t done, size_t total, size_t* delivered) override {
    if (total <= kLLMaxBytes) {
      bool returned = false;
      *delivered = llIn_.Recv(&in_->ll, sink, done, total, &returned);
      ringDue_ |= returned;  // the sender may be asleep waiting for lines
      return Status::Ok();
    }
    if (IsLarge(total)) return TryRecvLarge(sink, done, total, delivered);
    RecvBytes(sink, done, total, delivered);
    return Status::Ok();
  }

  // A pair's messages arrive in the order they were sent, each as LL lines or in the byte ring by
  // its size. So where a receive has found nothing its way while the other way holds the peer's
  // next message, the peer sent a message of another size: the calls do not match (count, type or
  // collective), and the tag check, which reads the message where this end expects it, would wait
  // for it until the timeout. The other way is read first and this way after it (acquire), so a
  // message of this end's size sent before the other one is seen.
  Status CheckUnstartedRecv(size_t total) const override {
    if (total <= kLLMaxBytes)
      return ByteRingHasMessage() && !llIn_.LineArrived(in_->ll) ? FramedOtherwise(total, "in the byte ring", "as lines")
                                                                 : Status::Ok();
    // A large message whose single-copy header is in has started (TryRecvLarge).
    if (recvHeader_ || !llIn_.LineArrived(in_->ll) || ByteRingHasMessage()) return Status::Ok();
    return FramedOtherwise(total, "as lines", "in the byte ring");
  }

  // The byte ring's messages only (not LL lines, not single-copy headers), written the way this
  // ring's copy-in writes now: where it streams (the VM's slow spells, ring_copy_in.h) a
  // producer's cached stores into the ring would be the slow way, so it streams too. The message
  // is placed (MessageStart) at its first window, as at its first TrySend.
  void* SendWindow(size_t done, size_t total, size_t* bytes, bool* stream) override {
    *bytes = 0;
    *stream = copyIn_.streaming() || g_windowStream.load(std::memory_order_relaxed);
    if (total <= kLLMaxBytes || IsLarge(total) || done >= total) return nullptr;
    const uint64_t tail = out_->tail.load(std::memory_order_acquire);
    if (done == 0) sendHead_ = MessageStart(sendHead_, tail, total);
    const uint64_t used = sendHead_ - tail;
    if (used >= cap_) return nullptr;
    const size_t at = sendHead_ % cap_;
    *bytes = std::min<size_t>({cap_ - used, cap_ - at, total - done});
    if (const unsigned nth = g_windowNone.load(std::memory_order_relaxed))
      if (g_windowCalls.fetch_add(1, std::memory_order_relaxed) % nth == 0) *bytes = 0;
    if (const size_t limit = g_windowLimit.load(std::memory_order_relaxed)) *bytes = std::min(*bytes, limit);
    return *bytes ? out_->data + at : nullptr;
  }

  void SendWritten(size_t n) override {
    sendHead_ += n;
    out_->head.store(sendHead_, std::memory_order_release);
    ringDue_ = true;
  }

  void Publish() override {
    if (!ringDue_) return;
    ringDue_ = false;
    peerBell_->Ring();
  }

  void PrepareNextSend() override {
    if (lastSendLL_) llOut_.ClaimNext(&out_->ll);
  }

  const char* Kind() const override { return "shm"; }

 private:
  // Pieces a single-copy receive moves per call, so the executor keeps other ops of the step going.
  static constexpr size_t kPiece = 1 << 20;
  // CMA into a reduction goes through this much of a bounce buffer at a time (stays in cache).
  static constexpr size_t kBounce = 256 << 10;

  // Whether the sender has begun a message in the byte ring that this end has not taken.
  bool ByteRingHasMessage() const { return in_->head.load(std::memory_order_acquire) > AlignMessage(recvTail_); }

  Status FramedOtherwise(size_t total, const char* got, const char* want) const {
    return InvalidUsage("mismatched calls across ranks: rank %d sent its next message %s, where this rank's "
                        "call expects one of %zu bytes (tag included) %s; the calls differ in count, type or "
                        "collective",
                        peer_, got, total, want);
  }

  // Both ends frame a message by its size alone, against the host's threshold or the operation's
  // lower one (ShmOperation::singleCopyFrom; never with single copy off).
  bool IsLarge(size_t total) const {
    return sc_->minBytes != 0 && total >= std::min(sc_->minBytes, operation_->singleCopyFrom);
  }

  // The byte ring: a message's payload at a 16-byte-aligned position.
  void SendBytes(const void* data, size_t done, size_t total, size_t* taken) {
    const uint64_t tail = out_->tail.load(std::memory_order_acquire);
    if (done == 0) sendHead_ = MessageStart(sendHead_, tail, total);
    // Aligning the message start may reserve padding beyond what is free: then nothing fits yet.
    uint64_t used = sendHead_ - tail;
    size_t space = used >= cap_ ? 0 : cap_ - used;
    size_t n = std::min<size_t>(space, total - done);
    *taken = n;
    if (n == 0) return;
    WriteRing(sendHead_, static_cast<const unsigned char*>(data) + done, n);
    sendHead_ += n;
    // Published at once, so the receiver can start on the tag while the payload is copied; the
    // wake-up waits for Publish().
    out_->head.store(sendHead_, std::memory_order_release);
    ringDue_ = true;
  }

  // Where the next message's payload starts: after the last one, 16-byte aligned; or, in an
  // operation whose rings restart (ShmHost::RingRestartFor), at the start of the ring's next lap
  // when the receiver has taken everything (`tail` is the sender's head) and the message fits
  // before where the last one started. The ring's hot lines are then two messages' worth instead
  // of its whole capacity, and the sender never writes the lines the receiver has just read
  // (restarting every message at offset 0 made an 8-rank 1 MiB broadcast 1.6x slower: each store
  // took a line back from the reader's cache). See shm_channel.h.
  uint64_t MessageStart(uint64_t head, uint64_t tail, size_t total) {
    const uint64_t aligned = AlignMessage(head);
    const uint64_t lapBase = aligned - aligned % cap_;
    const uint64_t lastAt = lastStart_ >= lapBase ? lastStart_ - lapBase : 0;  // 0: it wrapped
    const bool restart = operation_->ringRestart && tail == head && total <= lastAt && lapBase + cap_ - tail + total <= cap_;
    lastStart_ = restart ? lapBase + cap_ : aligned;
    if (!restart) return aligned;
    out_->restart.from.store(aligned, std::memory_order_relaxed);
    out_->restart.to.store(lastStart_, std::memory_order_relaxed);  // published by the head's release store
    g_ringRestarts.fetch_add(1, std::memory_order_relaxed);
    return lastStart_;
  }

  // The receiver's side of MessageStart: false while the message after `tail` is not published
  // (then it may still move, so nothing may be read yet); else where it starts. A record names the
  // published message only if it names this position: one left from an earlier move names a
  // position behind us, and the sender writes the next only after this message is taken.
  bool PublishedMessageStart(uint64_t tail, uint64_t* start) const {
    const uint64_t aligned = AlignMessage(tail);
    if (in_->head.load(std::memory_order_acquire) <= aligned) return false;
    const bool moved = in_->restart.from.load(std::memory_order_relaxed) == aligned;
    *start = moved ? in_->restart.to.load(std::memory_order_relaxed) : aligned;
    return true;
  }

  void RecvBytes(const RecvSink& sink, size_t done, size_t total, size_t* delivered) {
    *delivered = 0;
    if (done == 0 && !PublishedMessageStart(recvTail_, &recvTail_)) return;
    size_t got = 0;
    // At most two pieces: up to the wrap, then from the ring start.
    for (int piece = 0; piece < 2; ++piece) {
      // The aligned start of a message may lie beyond what the sender has published so far.
      uint64_t head = in_->head.load(std::memory_order_acquire);
      uint64_t avail = head > recvTail_ ? head - recvTail_ : 0;
      size_t at = recvTail_ % cap_;
      size_t n = std::min<size_t>({avail, total - done - got, cap_ - at, sink.maxBytes - got});
      n -= n % sink.granularity;
      if (n == 0) break;
      const unsigned char* frag = in_->data + at;
      // Larger fragments are timed for the sender's choice of how to write them, and counted for
      // this end's own sender: the pair then streams both ways (ring_copy_in.h). Only where the
      // measured rule applies, which is alike at both ends (it depends on the host's ranks and cores).
      const uint64_t t0 = n >= kTimedRingBytes && copyIn_.measures() ? CycleNow() : 0;
      if (sink.direct)
        CopyOut(sink, static_cast<unsigned char*>(sink.direct) + done + got, frag, n);
      else
        Consume(sink, frag, done + got, n);
      if (t0) {
        const uint64_t t1 = CycleNow();
        RecordRingRead(&in_->readCost, at, cap_, n, t1 > t0 ? t1 - t0 : 0);
        copyIn_.NoteReceived(n);
      }
      recvTail_ += n;
      got += n;
    }
    if (got) {
      in_->tail.store(recvTail_, std::memory_order_release);
      ringDue_ = true;  // the sender may be waiting for space
    }
    *delivered = got;
  }

  // Through the cache or streamed (ring_copy_in.h); streamed stores are fenced within Copy, so they
  // are visible before the head that the caller publishes next. A change of way is logged
  // (TCCL_DEBUG=INFO TCCL_DEBUG_SUBSYS=SHM): rare, a window apart.
  void WriteRing(uint64_t pos, const void* src, size_t n) {
    const unsigned char* s = static_cast<const unsigned char*>(src);
    size_t at = pos % cap_, first = std::min(n, cap_ - at);
    const bool streamed = copyIn_.streaming();
    copyIn_.Copy(out_->data + at, at, cap_, s, first);
    if (n > first) copyIn_.Copy(out_->data, 0, cap_, s + first, n - first);
    if (copyIn_.streaming() != streamed)
      TCCL_INFO(kLogShm, "to local peer %d: ring copy-in now %s (%s)", peer_,
                copyIn_.streaming() ? "streamed" : "through the cache", copyIn_.reason());
  }

  void ReadRing(uint64_t pos, void* dst, size_t n) const {
    unsigned char* d = static_cast<unsigned char*>(dst);
    size_t at = pos % cap_, first = std::min(n, cap_ - at);
    memcpy(d, in_->data + at, first);
    if (n > first) memcpy(d + first, in_->data, n - first);
  }

  // A message of at least TCCL_SHM_SINGLE_COPY_BYTES: header first (single_copy.h), then either
  // the payload through the ring or a wait until the receiver has read it from this rank's memory.
  Status TrySendLarge(const void* data, size_t done, size_t total, size_t* taken) {
    *taken = 0;
    if (!sendHeader_) {
      const SingleCopyHeader h = DescribeForPeer(*sc_, peer_, data, total, operation_->offerRegistered);
      // The header starts where any message would (MessageStart), so framed messages start over
      // too; an inline payload follows it at once, so the two are placed as one.
      const uint64_t tail = out_->tail.load(std::memory_order_acquire);
      const size_t framed = sizeof(h) + (h.mode == (uint32_t)CopyMode::Inline ? total : 0);
      const uint64_t at = MessageStart(sendHead_, tail, framed);
      if (at + sizeof(h) - tail > cap_) return Status::Ok();
      if (h.mode == (uint32_t)CopyMode::Pointer) AnnotateHandOff(data);
      WriteRing(at, &h, sizeof(h));
      sendHead_ = at + sizeof(h);
      out_->head.store(sendHead_, std::memory_order_release);
      ringDue_ = true;
      sendHeader_ = true;
      sendMode_ = (CopyMode)h.mode;
      if (sendMode_ != CopyMode::Inline) awaitCopied_ = ++copiesSent_;
    }
    if (sendMode_ == CopyMode::Inline) {
      SendBytes(data, done, total, taken);
      if (done + *taken == total) sendHeader_ = false;
      return Status::Ok();
    }
    if (out_->copied.load(std::memory_order_acquire) < awaitCopied_) return Status::Ok();
    if (sendMode_ == CopyMode::Pointer) AnnotateTakeOver(data);
    *taken = total - done;
    sendHeader_ = false;
    return Status::Ok();
  }

  Status TryRecvLarge(const RecvSink& sink, size_t done, size_t total, size_t* delivered) {
    *delivered = 0;
    if (!recvHeader_) {
      uint64_t at = 0;
      if (!PublishedMessageStart(recvTail_, &at) || in_->head.load(std::memory_order_acquire) < at + sizeof(rh_))
        return Status::Ok();
      ReadRing(at, &rh_, sizeof(rh_));
      recvTail_ = at + sizeof(rh_);
      in_->tail.store(recvTail_, std::memory_order_release);
      ringDue_ = true;
      recvHeader_ = true;
      src_ = nullptr;
      switch ((CopyMode)rh_.mode) {
        case CopyMode::Inline:
        case CopyMode::Cma:
          break;
        case CopyMode::Pointer:
          src_ = reinterpret_cast<const unsigned char*>((uintptr_t)rh_.address);
          AnnotateTakeOver(src_);
          break;
        case CopyMode::Mapped: {
          const unsigned char* base = nullptr;
          TCCL_RETURN_IF_ERROR(mappings_.Map(sc_->peers[peer_].pid, rh_, &base));
          src_ = base + rh_.offset;
          break;
        }
        default:
          return InternalError("single-copy header with unknown mode %u", rh_.mode);
      }
    }
    const CopyMode mode = (CopyMode)rh_.mode;
    if (mode == CopyMode::Inline) {
      RecvBytes(sink, done, total, delivered);
      if (done + *delivered == total) {
        recvHeader_ = false;
        CountSingleCopyMessage(mode);
      }
      return Status::Ok();
    }
    size_t n = std::min(total - done, kPiece);
    unsigned char* direct = sink.direct ? static_cast<unsigned char*>(sink.direct) + done : nullptr;
    if (mode == CopyMode::Cma) {
      const int pid = sc_->peers[peer_].pid;
      if (direct) {
        TCCL_RETURN_IF_ERROR(CmaRead(pid, rh_.address + done, direct, n));
      } else {
        n = std::min(n, kBounce);
        bounce_.resize(kBounce);
        TCCL_RETURN_IF_ERROR(CmaRead(pid, rh_.address + done, bounce_.data(), n));
        sink.consume(sink.ctx, bounce_.data(), done, n);
      }
    } else if (direct) {
      CopyOut(sink, direct, src_ + done, n);
    } else {
      Consume(sink, src_ + done, done, n);
    }
    *delivered = n;
    if (done + n == total) {
      if (mode == CopyMode::Pointer) AnnotateHandOff(src_);
      in_->copied.store(++copiesRead_, std::memory_order_release);
      ringDue_ = true;  // the sender waits for this
      recvHeader_ = false;
      CountSingleCopyMessage(mode);
    }
    return Status::Ok();
  }

  // A receive's bytes into `dst` (the sink's direct place, out of the ring or a peer's memory):
  // past the cache where the sink is the data's final place and the operation streams outputs.
  void CopyOut(const RecvSink& sink, void* dst, const void* src, size_t n) const {
    if (StreamsFinalPlace(sink, n))
      StreamOutput(dst, src, n);
    else
      CopyBytes(dst, src, n);
  }

  // A receive consumed (reduced) into its final place: past the cache on the same terms as CopyOut.
  void Consume(const RecvSink& sink, const void* frag, size_t offset, size_t n) const {
    if (sink.consumeStreamed && StreamsFinalPlace(sink, n)) {
      sink.consumeStreamed(sink.ctx, frag, offset, n);
      FenceStreamedOutput(n);
    } else {
      sink.consume(sink.ctx, frag, offset, n);
    }
  }

  bool StreamsFinalPlace(const RecvSink& sink, size_t n) const {
    return sink.finalDst && operation_->streamOutputs && n >= kTimedRingBytes;
  }

  ShmChannel* out_;
  ShmChannel* in_;
  size_t cap_;
  Doorbell* peerBell_;
  const SingleCopyConfig* sc_;
  int peer_;  // local index
  uint64_t sendHead_ = 0;
  uint64_t recvTail_ = 0;
  const ShmOperation* operation_;  // the host's: the running operation's settings
  uint64_t lastStart_ = 0;         // where the last message sent through the byte ring started
  bool ringDue_ = false;
  bool lastSendLL_ = false;  // the last message sent went by the LL ring
  RingCopyIn copyIn_;
  LLSender llOut_;
  LLReceiver llIn_;
  // Single copy: the message in progress in each direction.
  bool sendHeader_ = false, recvHeader_ = false;
  CopyMode sendMode_ = CopyMode::Inline;
  uint64_t copiesSent_ = 0, awaitCopied_ = 0, copiesRead_ = 0;
  SingleCopyHeader rh_;
  const unsigned char* src_ = nullptr;
  PeerMappings mappings_;
  std::vector<unsigned char> bounce_;
};

}  // namespace

void LimitSendWindowsForTests(size_t bytes, unsigned nth) {
  g_windowLimit.store(bytes, std::memory_order_relaxed);
  g_windowNone.store(nth, std::memory_order_relaxed);
}

void StreamSendWindowsForTests(bool stream) { g_windowStream.store(stream, std::memory_order_relaxed); }

uint64_t RingRestarts() { return g_ringRestarts.load(std::memory_order_relaxed); }
uint64_t StreamedReceiveBytes() { return g_streamedReceiveBytes.load(std::memory_order_relaxed); }

bool RingsOutgrowTheCache(size_t rings, size_t ringBytes, size_t cacheBytes) {
  return cacheBytes != 0 && rings * ringBytes > cacheBytes / 4;
}

bool PairRingsOutgrowTheCache(size_t localRanks, size_t ringBytes, size_t cacheBytes) {
  return cacheBytes > 0 && localRanks > 1 && localRanks * (localRanks - 1) * ringBytes > cacheBytes;
}

size_t HostSingleCopyBytes(size_t singleCopyBytes, size_t localRanks, size_t ringBytes, size_t cacheBytes) {
  if (singleCopyBytes == 0 || !PairRingsOutgrowTheCache(localRanks, ringBytes, cacheBytes)) return singleCopyBytes;
  return std::min(singleCopyBytes, kSingleCopyBytesWhereRingsOutgrowTheCache);
}

bool ShmHost::RingRestartFor(size_t rings) const {
  if (ringRestart_ != RingRestart::Auto) return ringRestart_ == RingRestart::Always;
  return RingsOutgrowTheCache(rings, ringBytes_, cacheBytes_);
}

Status ShmHost::Setup(Bootstrap& boot, const std::string& segName, const std::vector<int>& localRanks,
                      const std::vector<int>& localPids, const std::vector<bool>& localSameProcess, int me,
                      size_t ringBytes, size_t singleCopyBytes, const Registrations* registered,
                      RingRestart ringRestart, std::shared_ptr<ShmHost>* out) {
  auto host = std::make_shared<ShmHost>();
  host->localRanks_ = localRanks;
  host->meIndex_ = host->IndexOf(me);
  host->ringBytes_ = std::max<size_t>(4096, ringBytes & ~size_t(kShmMessageAlign - 1));
  size_t L = localRanks.size();
  host->ringRestart_ = ringRestart;
  host->cacheBytes_ = LastLevelCacheBytes();
  // A channel per ordered pair of distinct local ranks (none to itself): 8 ranks with the default
  // 1 MiB rings take 57 MiB, inside a container's default 64 MiB /dev/shm.
  size_t bytes = kHeaderBytes + L * sizeof(Doorbell) + L * (L - 1) * ShmChannel::BytesFor(host->ringBytes_);
  bool leader = host->meIndex_ == 0;
  // Phase 1: the host leader creates; phase 2: the others map; phase 3: the name is removed so a
  // crash later leaves nothing behind in /dev/shm.
  Status created = leader ? host->seg_.Create(segName, bytes) : Status::Ok();
  // Every rank learns whether its host's segment exists (an all-gather instead of a barrier), so a
  // leader's failure ends every rank's setup at once instead of leaving its peers to time out.
  std::vector<std::string> creation;
  TCCL_RETURN_IF_ERROR(boot.AllGather(created.ok() ? std::string() : created.message(), &creation));
  TCCL_RETURN_IF_ERROR(created);
  if (!creation[localRanks[0]].empty())
    return SystemError("rank %d (this host's first rank) could not create the host's shared memory: %s",
                       localRanks[0], creation[localRanks[0]].c_str());
  Status opened = leader ? Status::Ok() : host->seg_.Open(segName, bytes);
  TCCL_RETURN_IF_ERROR(boot.Barrier());
  if (leader) host->seg_.Unlink();
  TCCL_RETURN_IF_ERROR(opened);
  host->MyDoorbell()->OfferHeavyFences();
  TCCL_INFO(kLogShm, "rank %d: shared memory %s, %zu local ranks, %zu bytes; doorbell rings %s", me, segName.c_str(), L,
            bytes, RegisteredForHeavyFences() ? "unfenced where the sleeper runs membarrier" : "fenced (no membarrier)");
  TCCL_RETURN_IF_ERROR(
      ProbeSingleCopy(boot, host->meIndex_, localRanks, localPids, localSameProcess, &host->singleCopy_.peers,
                      &host->singleCopy_.everyoneMaps));
  // A single-copy header travels through the ring, so messages must be larger than a header.
  const size_t from = HostSingleCopyBytes(singleCopyBytes, L, host->ringBytes_, host->cacheBytes_);
  host->singleCopy_.minBytes = from == 0 ? 0 : std::max<size_t>(from, kLLMaxBytes + 1);
  host->singleCopy_.registered = registered;
  for (size_t i = 0; i < L; ++i)
    if ((int)i != host->meIndex_) {
      const SingleCopyPeer& p = host->singleCopy_.peers[i];
      TCCL_INFO(kLogShm, "rank %d: single copy to rank %d from %zu B: %s", me, localRanks[i],
                host->singleCopy_.minBytes,
                p.sameProcess ? "any buffer (same process)"
                : p.canMap    ? (p.canCma ? "tcclMemAlloc buffers (mapped), buffers offered for CMA"
                                          : "tcclMemAlloc buffers (mapped)")
                : p.canCma    ? "buffers offered for CMA"
                              : "none (the peer can neither map this process's memory nor read it with CMA)");
    }
  *out = std::move(host);
  return Status::Ok();
}

void ShmHost::PublishFailure(int reporterRank, const std::string& reason) {
  auto* rec = static_cast<FailureRecord*>(seg_.data());
  uint32_t none = 0;
  if (rec->state.compare_exchange_strong(none, 1, std::memory_order_acq_rel)) {
    rec->reporter = reporterRank;
    snprintf(rec->reason, sizeof(rec->reason), "%s", reason.c_str());
    rec->state.store(2, std::memory_order_release);
  }
  for (size_t i = 0; i < localRanks_.size(); ++i) DoorbellOf((int)i)->RingAlways();
}

bool ShmHost::AnyFailureReported() const {
  return static_cast<const FailureRecord*>(seg_.data())->state.load(std::memory_order_acquire) == 2;
}

bool ShmHost::FailureReported(int* reporterRank, std::string* reason) const {
  if (!AnyFailureReported()) return false;
  auto* rec = static_cast<const FailureRecord*>(seg_.data());
  *reporterRank = rec->reporter;
  *reason = std::string(rec->reason, strnlen(rec->reason, sizeof(rec->reason)));
  return true;
}

int ShmHost::IndexOf(int rank) const {
  auto it = std::find(localRanks_.begin(), localRanks_.end(), rank);
  return it == localRanks_.end() ? -1 : (int)(it - localRanks_.begin());
}

Doorbell* ShmHost::DoorbellOf(int index) const {
  return reinterpret_cast<Doorbell*>(static_cast<unsigned char*>(seg_.data()) + kHeaderBytes) + index;
}

Doorbell* ShmHost::MyDoorbell() { return DoorbellOf(meIndex_); }

unsigned char* ShmHost::ChannelBase(int from, int to) const {
  // Row `from` holds its L - 1 channels to the other ranks, in rank order, skipping itself.
  const size_t L = localRanks_.size();
  unsigned char* chans = static_cast<unsigned char*>(seg_.data()) + kHeaderBytes + L * sizeof(Doorbell);
  const size_t column = (size_t)(to < from ? to : to - 1);
  return chans + ((size_t)from * (L - 1) + column) * ShmChannel::BytesFor(ringBytes_);
}

std::unique_ptr<Connection> ShmHost::ConnectionTo(int peerRank, bool eachRankHasACore) {
  int p = IndexOf(peerRank);
  auto* out = reinterpret_cast<ShmChannel*>(ChannelBase(meIndex_, p));
  auto* in = reinterpret_cast<ShmChannel*>(ChannelBase(p, meIndex_));
  // Each process's first access to a page of a shared mapping is slow in the development VM even
  // after MAP_POPULATE (measured; docs/performance.md names the likely cause, its hypervisor), so
  // both ends touch their ring now instead of on the first lap. The sender owns its ring's bytes
  // until it publishes them, so it can write them all (without this: an 8-iteration period of
  // 20 us stalls at 4 KiB). The receiver only reads: one byte per page of the incoming ring, whose
  // value does not matter (without this, 8 ranks' 32 KiB all-gather took 165-200 us per call until
  // the rings had gone round once, ~250 calls, then 60).
  memset(out->data, 0, ringBytes_);
  const volatile unsigned char* inBytes = in->data;  // volatile: each read happens
  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  for (size_t off = 0; off < ringBytes_; off += page) (void)inBytes[off];
  return std::make_unique<ShmConnection>(out, in, ringBytes_, &operation_, DoorbellOf(p), &singleCopy_, p,
                                         eachRankHasACore);
}

}  // namespace tccl
