#include "transports/shm/shm_transport.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>

#include "core/log.h"
#include "transports/shm/shm_channel.h"

namespace tccl {

namespace {

struct FailureRecord {
  std::atomic<uint32_t> state;  // 0: none, 1: being written, 2: written (the segment starts zeroed)
  int32_t reporter;
  char reason[1016];
};
constexpr size_t kHeaderBytes = sizeof(FailureRecord);
static_assert(kHeaderBytes % 64 == 0, "doorbells stay cache-line aligned");

class ShmConnection : public Connection {
 public:
  ShmConnection(ShmChannel* out, ShmChannel* in, size_t cap, Doorbell* peerBell)
      : out_(out), in_(in), cap_(cap), peerBell_(peerBell), llOut_(out->ll), llIn_(in->ll) {
    sendHead_ = out_->head.load(std::memory_order_relaxed);
    recvTail_ = in_->tail.load(std::memory_order_relaxed);
  }

  Status TrySend(const void* data, size_t done, size_t total, size_t* taken) override {
    if (total <= kLLMaxBytes) {
      *taken = llOut_.Send(&out_->ll, data, done, total);
      ringDue_ |= *taken > 0;
      return Status::Ok();
    }
    if (done == 0) sendHead_ = AlignMessage(sendHead_);
    // Aligning the message start may reserve padding beyond what is free: then nothing fits yet.
    uint64_t used = sendHead_ - out_->tail.load(std::memory_order_acquire);
    size_t space = used >= cap_ ? 0 : cap_ - used;
    size_t n = std::min<size_t>(space, total - done);
    *taken = n;
    if (n == 0) return Status::Ok();
    const unsigned char* src = static_cast<const unsigned char*>(data) + done;
    size_t at = sendHead_ % cap_;
    size_t first = std::min(n, cap_ - at);
    memcpy(out_->data + at, src, first);
    if (n > first) memcpy(out_->data, src + first, n - first);
    sendHead_ += n;
    // Published at once, so the receiver can start on the tag while the payload is copied; the
    // wake-up waits for Publish().
    out_->head.store(sendHead_, std::memory_order_release);
    ringDue_ = true;
    return Status::Ok();
  }

  Status TryRecv(const RecvSink& sink, size_t done, size_t total, size_t* delivered) override {
    if (total <= kLLMaxBytes) {
      bool returned = false;
      *delivered = llIn_.Recv(&in_->ll, sink, done, total, &returned);
      ringDue_ |= returned;  // the sender may be asleep waiting for lines
      return Status::Ok();
    }
    if (done == 0) recvTail_ = AlignMessage(recvTail_);
    size_t got = 0;
    // At most two pieces: up to the wrap, then from the ring start.
    for (int piece = 0; piece < 2; ++piece) {
      // The aligned start of a message may lie beyond what the sender has published so far.
      uint64_t head = in_->head.load(std::memory_order_acquire);
      uint64_t avail = head > recvTail_ ? head - recvTail_ : 0;
      size_t at = recvTail_ % cap_;
      size_t n = std::min<size_t>({avail, total - done - got, cap_ - at});
      n -= n % sink.granularity;
      if (n == 0) break;
      const unsigned char* frag = in_->data + at;
      if (sink.direct)
        memcpy(static_cast<unsigned char*>(sink.direct) + done + got, frag, n);
      else
        sink.consume(sink.ctx, frag, done + got, n);
      recvTail_ += n;
      got += n;
    }
    if (got) {
      in_->tail.store(recvTail_, std::memory_order_release);
      ringDue_ = true;  // the sender may be waiting for space
    }
    *delivered = got;
    return Status::Ok();
  }

  void Publish() override {
    if (!ringDue_) return;
    ringDue_ = false;
    peerBell_->Ring();
  }

  const char* Kind() const override { return "shm"; }

 private:
  ShmChannel* out_;
  ShmChannel* in_;
  size_t cap_;
  Doorbell* peerBell_;
  uint64_t sendHead_ = 0;
  uint64_t recvTail_ = 0;
  bool ringDue_ = false;
  LLSender llOut_;
  LLReceiver llIn_;
};

}  // namespace

Status ShmHost::Setup(Bootstrap& boot, const std::string& segName, const std::vector<int>& localRanks,
                      int me, size_t ringBytes, std::shared_ptr<ShmHost>* out) {
  auto host = std::make_shared<ShmHost>();
  host->localRanks_ = localRanks;
  host->meIndex_ = host->IndexOf(me);
  host->ringBytes_ = std::max<size_t>(4096, ringBytes & ~size_t(kShmMessageAlign - 1));
  size_t L = localRanks.size();
  size_t bytes = kHeaderBytes + L * sizeof(Doorbell) + L * L * ShmChannel::BytesFor(host->ringBytes_);
  bool leader = host->meIndex_ == 0;
  // Phase 1: the host leader creates; phase 2: the others map; phase 3: the name is removed so a
  // crash later leaves nothing behind in /dev/shm.
  Status created = leader ? host->seg_.Create(segName, bytes) : Status::Ok();
  TCCL_RETURN_IF_ERROR(boot.Barrier());
  TCCL_RETURN_IF_ERROR(created);
  Status opened = leader ? Status::Ok() : host->seg_.Open(segName, bytes);
  TCCL_RETURN_IF_ERROR(boot.Barrier());
  if (leader) host->seg_.Unlink();
  TCCL_RETURN_IF_ERROR(opened);
  TCCL_INFO(kLogShm, "rank %d: shared memory %s, %zu local ranks, %zu bytes", me, segName.c_str(),
            L, bytes);
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

bool ShmHost::FailureReported(int* reporterRank, std::string* reason) const {
  auto* rec = static_cast<const FailureRecord*>(seg_.data());
  if (rec->state.load(std::memory_order_acquire) != 2) return false;
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
  size_t L = localRanks_.size();
  unsigned char* chans = static_cast<unsigned char*>(seg_.data()) + kHeaderBytes + L * sizeof(Doorbell);
  return chans + (from * L + to) * ShmChannel::BytesFor(ringBytes_);
}

std::unique_ptr<Connection> ShmHost::ConnectionTo(int peerRank) {
  int p = IndexOf(peerRank);
  auto* out = reinterpret_cast<ShmChannel*>(ChannelBase(meIndex_, p));
  auto* in = reinterpret_cast<ShmChannel*>(ChannelBase(p, meIndex_));
  // The sender owns its ring's bytes until it publishes them, so it can write the whole ring now:
  // the first lap through fresh shared pages otherwise stalled ~20 us per 32 KiB in the
  // development VM (measured: 8-iteration period of 20 us stalls at 4 KiB, gone after one lap).
  memset(out->data, 0, ringBytes_);
  return std::make_unique<ShmConnection>(out, in, ringBytes_, DoorbellOf(p));
}

}  // namespace tccl
