#include "comm/communicator.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>

#include "algorithms/registry.h"
#include "comm/local_rings.h"
#include "comm/registered_by_cma.h"
#include "core/log.h"
#include "kernels/host/dtype.h"
#include "memory/shared_memory.h"
#include "topology/cache_size.h"

namespace tccl {

namespace {

// How long a rank waits for a failed peer's reason in the store (and to write its own).
constexpr double kFailRecordWaitSec = 1.0;

}  // namespace

Communicator::~Communicator() {
  UnregisterForSignalDump(this);
  if (sharedScratch_) SharedMemFree(sharedScratch_);
}

void Communicator::Abort() {
  aborted_.store(true);
  Fail(InvalidUsage("%s was aborted (tcclCommAbort)", Describe().c_str()));
}

std::string Communicator::DumpFlightRecorder() const {
  return flight_ ? flight_->Dump(Describe()) : Describe() + ": no flight recorder";
}

Status Communicator::ReadPeerFailure() const {
  int reporter = -1;
  std::string reason;
  if (shm_->FailureReported(&reporter, &reason) && reporter != rank_)
    return RemoteError("%s reported a failure: %s", DescribePeer(reporter).c_str(), reason.c_str());
  return Status::Ok();
}

Status Communicator::Health(bool force, const std::vector<int>* only) {
  TCCL_RETURN_IF_ERROR(PeerReportedFailure());
  return monitor_ ? monitor_->Check([this](int r) { return DescribePeer(r); }, force, only) : Status::Ok();
}

std::string Communicator::FailKey(int rank) const { return "fail/" + IdHex(commId_) + "/" + std::to_string(rank); }

Status Communicator::Explain(const Status& st, int peer) {
  if (st.code() != tcclRemoteError || peer < 0) return st;
  Status cause = Health(true);
  // A watched peer's socket closes a moment before its exit is signalled on the pidfd.
  for (int i = 0; i < 20 && cause.ok() && monitor_->Watches(peer); ++i) {
    usleep(5000);
    cause = Health(true);
  }
  std::string record;
  // The record is written before the peer shuts its connections, so it is normally there at once;
  // a peer that was killed wrote none, and the wait is bounded.
  if (cause.ok() && boot_->store()->Get(FailKey(peer), Deadline::After(kFailRecordWaitSec), &record).ok())
    return Status(st.code(), st.message() + "; it had failed first: " + record);
  if (cause.ok()) cause = Health(true);
  if (!cause.ok()) return Status(cause.code(), st.message() + "; cause: " + cause.message());
  // No record (a killed rank writes none, and the store dies with the rank that hosts it): name
  // the other peers whose TCP connections are closed too. A peer that failed first is among them
  // (the one we lost may only have been relaying its failure).
  std::string closed;
  int nclosed = 0;
  for (int r = 0; r < nranks_; ++r) {
    if (r == rank_ || r == peer || !conns_[r] || conns_[r]->PollFd() < 0) continue;
    pollfd p{conns_[r]->PollFd(), POLLRDHUP, 0};
    if (poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)))
      closed += (nclosed++ ? "; " : "") + DescribePeer(r);
  }
  if (!closed.empty())
    return Status(st.code(), st.message() + "; the connection" + (nclosed > 1 ? "s" : "") + " from " + closed +
                                 " closed too (no failure record could be read)");
  return st;
}

void Communicator::Fail(const Status& st) {
  {
    std::lock_guard<std::mutex> g(failMu_);
    if (!failure_.ok()) return;
    failure_ = st;
    failed_.store(true);
  }
  SetAsyncError(st);
  if (shm_) shm_->PublishFailure(rank_, st.message());
  // For peers on other hosts, which only see the connection close: the reason, kept in the store.
  boot_->store()->Set(FailKey(rank_), st.message().substr(0, 4000), Deadline::After(kFailRecordWaitSec));
  for (auto& c : conns_)
    if (c) c->Shutdown();
  // Device work of this rank that waits for peers is released (it completes without data).
  if (device_) device_->Release();
  if (!aborted()) TCCL_WARN(kLogColl, "%s", DumpFlightRecorder().c_str());
}

Status Communicator::DescribeFailure() const {
  std::lock_guard<std::mutex> g(failMu_);
  if (failure_.ok()) return Status::Ok();
  if (aborted()) return InvalidUsage("%s was aborted; destroy it and create a new one", Describe().c_str());
  return Status(failure_.code(), Describe() + " is unusable after an earlier failure (" + failure_.message() +
                                     "); abort or destroy it and create a new one");
}

std::string Communicator::DescribePeer(int r) const {
  if (r < 0 || r >= (int)peers_.size()) return "rank " + std::to_string(r);
  const PeerInfo& p = peers_[r];
  return "rank " + std::to_string(r) + " (host " + p.hostName + ", pid " + std::to_string(p.pid) + ")";
}

std::string Communicator::Describe() const {
  return "comm '" + settings_.name + "' (rank " + std::to_string(rank_) + " of " + std::to_string(nranks_) + ")";
}

void Communicator::SetAsyncError(const Status& st) {
  tcclResult_t expected = tcclSuccess;
  if (!st.ok()) asyncError_.compare_exchange_strong(expected, st.code());
}

void Communicator::AddSchedulePeers(const Schedule& s, FlightEntry* entry) const {
  for (const Step& step : s.steps)
    for (const Op& o : step.ops)
      if (o.peer >= 0 && o.peer != rank_) entry->AddPeer(o.peer);
}

Status Communicator::Execute(const Schedule& s, const ExecKernels& k, std::vector<void*>& bufs, const OpTag& tag,
                             const FlightEntry& entry, uint64_t seq, FunctionRef<std::string()> describe) {
  TCCL_RETURN_IF_ERROR(Broken());
  // A local peer that already failed will not take part (one load of a read-mostly cache line).
  Status reported = PeerReportedFailure();
  if (!reported.ok()) {
    Status st(reported.code(), describe() + ": " + reported.message());
    Fail(st);
    return st;
  }
  size_t slot = flight_->Start(entry, seq);
  bufs[kScratchBuf] = s.scratchElems ? ScratchFor(s, k.elemSize) : nullptr;
  ExecEnv& env = env_;
  env.tag = tag;
  env.failedPeer = -1;
  env.waited = false;
  Status st = tccl::Execute(s, bufs, k, env, describe);
  flight_->Finish(slot, st.ok(), !st.ok() || env.waited || entry.count * k.elemSize >= kFlightTimedFromBytes);
  if (!st.ok()) st = Explain(st, env.failedPeer);
  if (!st.ok()) {
    TCCL_WARN(kLogColl, "%s", st.message().c_str());
    Fail(st);
  }
  return st;
}

void* Communicator::ScratchFor(const Schedule& s, size_t elemSize) {
  const size_t need = s.scratchElems * elemSize;
  const bool wantShared = s.sharedScratch && sharedScratchBytes_ && need;
  if (wantShared && sharedScratchSize_ < need) {
    // Where shared memory runs out, private scratch still works: its messages go inline.
    if (sharedScratch_) SharedMemFree(sharedScratch_);
    sharedScratch_ = nullptr;
    sharedScratchSize_ = SharedMemAlloc(need, &sharedScratch_).ok() ? need : 0;
  }
  if (wantShared && sharedScratchSize_ >= need) return sharedScratch_;
  if (scratch_.size() < need) scratch_.resize(need);
  return scratch_.data();
}

bool Communicator::BroadcastGoesByCma(size_t bytes) const {
  // Every rank on this host: what was measured, and the selection prices the CMA reads only then.
  return allLocal_ && shm_ && shm_->SingleCopy().minBytes != 0 &&
         BroadcastByCma(exchangesByCma_, sameHost_.size(), bytes, cost_.machine.cacheBytes);
}

// Whether peers will read this call's buffers in one copy (single_copy.h), for the cost model.
// Every rank decides from its own buffers; ranks whose buffers differ in kind (tcclMemAlloc on
// some, malloc on others) may pick different algorithms, which the first message's tag reports
// (docs/single_copy.md: allocate or register alike on every rank, as NCCL asks of registration).
size_t Communicator::SingleCopyBytesFor(const CollArgs& a, const void* send, const void* recv) const {
  if (!allLocal_ || nranks_ == 1 || !shm_) return 0;
  const SingleCopyConfig& cfg = shm_->SingleCopy();
  const size_t c = a.count * a.elemSize, all = c * (size_t)a.nranks;
  // No buffer of the call is larger than `all`: below the threshold the answer is 0 at once.
  if (cfg.minBytes == 0 || all < cfg.minBytes) return 0;
  const CallBufferBytes b = BufferBytes(a);
  // No message of this call can reach the threshold (none is larger than the buffer it comes
  // from or goes to), so the answer cannot matter: skip the lookups and their two mutexes per
  // buffer (~10% of a 2-rank 8-byte call, docs/performance.md).
  if (std::max(b.send, b.recv) < cfg.minBytes) return 0;
  const bool sendUsed = a.kind != CollKind::Broadcast || a.rank == a.root;
  // Registered buffers count only where the transport offers them (registered_by_cma.h).
  const bool registered = OfferRegisteredByCma();
  const bool covered = (!sendUsed || SingleCopyCovers(cfg, send, b.send, registered)) &&
                       SingleCopyCovers(cfg, recv, b.recv, registered);
  return covered ? cfg.minBytes : 0;
}

Status Communicator::RunCollective(const CollArgs& in, tcclDataType_t dt, const void* send, void* recv) {
  std::lock_guard<OpLock> g(opLock_);
  if (aborted()) return InvalidUsage("%s was aborted; destroy it and create a new one", Describe().c_str());
  CollArgs a = in;
  a.rank = rank_;
  a.nranks = nranks_;
  a.elemSize = DtypeSize(dt);
  // A shift, not a 64-bit division (tens of cycles on some x86 cores, per call): element sizes are
  // powers of two.
  a.sliceElems = std::max<size_t>(1, sliceBytes_ >> __builtin_ctzll(a.elemSize));
  const bool reduces = a.kind == CollKind::AllReduce || a.kind == CollKind::ReduceScatter || a.kind == CollKind::Reduce;
  a.requireCanonical = reduces && settings_.determinism == tcclDeterminismStrict && DtypeIsFloat(dt) &&
                       (a.op == tcclSum || a.op == tcclProd || a.op == tcclAvg);
  a.singleCopyBytes = SingleCopyBytesFor(a, send, recv);
  // A broadcast read by CMA from plain buffers is selected as over mapped ones (the same on every
  // rank: its size and the host's model decide), each message a system call.
  a.singleCopyByCma = a.kind == CollKind::Broadcast && BroadcastGoesByCma(a.count * a.elemSize);
  if (a.singleCopyByCma) a.singleCopyBytes = kSingleCopyBytesWhereBroadcastGoesByCma;
  a.sharedScratchBytes = sharedScratchBytes_;
  a.lineMessageBytes = cost_.lineMessageBytes;
  const Plan* plan = plans_.Find(a, dt);
  if (!plan) {
    Plan fresh;
    // What schedules may rely on here (CollArgs::bufferedBytes ...): fixed per communicator or
    // derived from what the cache compares, so set only when a plan is made.
    const CallBufferBytes b = BufferBytes(a);
    if (allLocal_ && shm_) {
      a.bufferedBytes = shm_->RingBytes();
      a.bufferedBelow = shm_->SingleCopy().minBytes;
      a.buffersOutgrowCache = OutgrowsLastLevelCache(sameHost_.size() * (b.recv + b.send));
    }
    TCCL_RETURN_IF_ERROR(SelectAlgorithm(a, filter_, cost_, &fresh.alg));
    fresh.algoIndex = (uint8_t)(fresh.alg - AllAlgorithms().data());
    fresh.schedule = fresh.alg->generate(a);
    PrepareSchedule(&fresh.schedule, a.elemSize);
    fresh.kernels = KernelsFor(dt, a.op);
    FlightEntry& r = fresh.record;
    r.op = CollName(a.kind);
    r.dtype = DtypeName(dt);
    r.algo = fresh.alg->name;
    r.count = a.count;
    r.root = a.kind == CollKind::Broadcast || a.kind == CollKind::Reduce ? a.root : -1;
    AddSchedulePeers(fresh.schedule, &r);
    // The local ranks' send and receive buffers together: where they outgrow the cache, receives
    // and local copies into their final place store past it.
    const bool pastCache = OutgrowsLastLevelCache(sameHost_.size() * (b.recv + (a.inPlace ? 0 : b.send)));
    fresh.kernels.streamFinalCopies = pastCache;
    if (shm_) {
      const size_t rings = LocalRingsWritten(*fresh.alg, a, sameHost_);
      fresh.shm.ringRestart = shm_->RingRestartFor(rings);
      fresh.shm.streamOutputs = pastCache;
      // Where AllToAllByCma holds, an all-to-all offers what it sends from for each call as if
      // registered: out of place its send buffer, in place (where AllToAllScratchByCma holds) the
      // scratch its blocks are set aside in. Its large blocks are then read by the receiver with
      // CMA. Only the transport changes: the algorithm was chosen above as for plain buffers, and
      // each message's header says how to read it, so ranks need not agree on this. The user's
      // registrations are offered only under the test hook (registered_by_cma.h).
      // Where ExchangesByCma holds, the all-gather (its own block is the user's, in place too) and
      // the out-of-place all-to-all offer their send buffers alike, and both frame messages with
      // a single-copy header from a lower size (in place too, so ranks agree whatever each
      // passes).
      // A broadcast alike where BroadcastByCma holds for its size (the root offers its buffer).
      const size_t blockBytes = a.count * a.elemSize;
      const bool exchanges = exchangesByCma_ && (a.kind == CollKind::AllGather || a.kind == CollKind::AllToAll);
      const bool broadcast = a.singleCopyByCma;  // BroadcastGoesByCma, above
      if (exchanges) fresh.shm.singleCopyFrom = kSingleCopyBytesWhereExchangesGoByCma;
      if (broadcast) fresh.shm.singleCopyFrom = kSingleCopyBytesWhereBroadcastGoesByCma;
      const size_t from = std::min(shm_->SingleCopy().minBytes, fresh.shm.singleCopyFrom);
      const bool bigBlocks = shm_->SingleCopy().minBytes != 0 && blockBytes >= from;
      fresh.offerBlocksByCma =
          (exchanges && bigBlocks && !(a.kind == CollKind::AllToAll && a.inPlace)) || (broadcast && rank_ == a.root) ||
          (allToAllByCma_ && a.kind == CollKind::AllToAll && bigBlocks &&
           (!a.inPlace || AllToAllScratchByCma(sameHost_.size(), blockBytes, LastLevelCacheBytes())));
      fresh.shm.offerRegistered = fresh.offerBlocksByCma || OfferRegisteredByCma();
      TCCL_TRACE(kLogShm, "%s of %zu x %s by %s: writes %zu rings of this host; messages %s; single-copy header from %zu B",
                 CollName(a.kind), a.count, DtypeName(dt), fresh.alg->name, rings,
                 fresh.shm.ringRestart ? "restart where a ring is empty" : "never restart", shm_->SingleCopy().minBytes);
    }
    plan = plans_.Add(a, dt, std::move(fresh));
  }
  if (shm_) shm_->SetOperation(plan->shm);
  const Schedule& s = plan->schedule;
  uint64_t seq = collSeq_++;
  OpTag tag;
  tag.seq = seq;
  tag.count = a.count;
  tag.root = a.root;
  tag.kind = (uint8_t)a.kind;
  tag.dtype = (uint8_t)dt;
  tag.redop = (uint8_t)a.op;
  tag.algo = plan->algoIndex;
  // The plan's record is not copied per call: the recorder takes it and this call's number.
  const FlightEntry* record = &plan->record;
  auto describe = [this, record, seq] {
    return std::string(record->op) + " #" + std::to_string(seq) + " (" + std::to_string(record->count) + " x " +
           record->dtype + ", " + record->algo + ") on " + Describe();
  };
  TCCL_TRACE(kLogColl, "%s: %zu steps", describe().c_str(), s.steps.size());
  collBufs_.resize(3);
  collBufs_[kSendBuf] = const_cast<void*>(send);
  collBufs_[kRecvBuf] = recv;
  collBufs_[kScratchBuf] = nullptr;
  // This call's offer (Plan::offerBlocksByCma): an in-place all-to-all's scratch, else the send
  // buffer (an all-gather's is its own block, in place inside the receive buffer).
  const bool offerByCma = plan->offerBlocksByCma;
  const bool offerScratch = offerByCma && a.inPlace && a.kind == CollKind::AllToAll;
  ScopedRegistration offer(offerByCma ? registrations_.get() : nullptr, offerScratch ? ScratchFor(s, a.elemSize) : send,
                           offerScratch                        ? s.scratchElems * a.elemSize
                           : a.kind == CollKind::AllToAll ? a.count * a.elemSize * nranks_
                                                               : a.count * a.elemSize);
  return Execute(s, plan->kernels, collBufs_, tag, plan->record, seq, describe);
}

Status Communicator::RunP2P(const std::vector<P2POp>& ops) {
  std::lock_guard<OpLock> g(opLock_);
  if (aborted()) return InvalidUsage("%s was aborted; destroy it and create a new one", Describe().c_str());
  if (shm_) {
    ShmOperation op;
    op.ringRestart = shm_->RingRestartFor(LocalRingsWritten(ops, rank_, sameHost_));
    op.offerRegistered = OfferRegisteredByCma();
    shm_->SetOperation(op);
  }
  Schedule s;
  Step step, copies;
  std::vector<void*> bufs = {nullptr, nullptr, nullptr};
  std::vector<const P2POp*> selfSends, selfRecvs;
  for (const P2POp& op : ops) {
    if (op.peer == rank_) {
      (op.send ? selfSends : selfRecvs).push_back(&op);
      continue;
    }
    Op o;
    o.kind = op.send ? OpKind::Send : OpKind::Recv;
    o.peer = op.peer;
    (op.send ? o.src : o.dst) = {(int)bufs.size(), 0};
    o.count = op.bytes;
    bufs.push_back(op.buf);
    step.ops.push_back(o);
  }
  if (selfSends.size() != selfRecvs.size())
    return InvalidUsage("%s: a group has %zu send(s) to self but %zu receive(s) from self", Describe().c_str(),
                        selfSends.size(), selfRecvs.size());
  for (size_t i = 0; i < selfSends.size(); ++i) {
    if (selfSends[i]->bytes != selfRecvs[i]->bytes)
      return InvalidUsage("%s: send to self of %zu bytes matched with a receive of %zu bytes", Describe().c_str(),
                          selfSends[i]->bytes, selfRecvs[i]->bytes);
    Op o;
    o.kind = OpKind::Copy;
    o.src = {(int)bufs.size(), 0};
    bufs.push_back(selfSends[i]->buf);
    o.dst = {(int)bufs.size(), 0};
    bufs.push_back(selfRecvs[i]->buf);
    o.count = selfSends[i]->bytes;
    copies.ops.push_back(o);
  }
  if (!copies.ops.empty()) s.steps.push_back(copies);
  if (!step.ops.empty()) s.steps.push_back(step);
  PrepareSchedule(&s, 1);  // sizes in bytes
  uint64_t seq = p2pSeq_++;
  auto describe = [&] {
    return "send/recv group #" + std::to_string(seq) + " (" + std::to_string(ops.size()) + " ops) on " + Describe();
  };
  OpTag tag;
  tag.kind = OpTag::kP2P;
  FlightEntry e;
  e.seq = seq;
  e.op = "send/recv";
  e.dtype = "bytes";
  e.algo = "p2p";
  for (const P2POp& op : ops) e.count += op.bytes;
  AddSchedulePeers(s, &e);
  return Execute(s, KernelsFor(tcclUint8, tcclSum), bufs, tag, e, seq, describe);
}

}  // namespace tccl
