#include "comm/communicator.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <sstream>

#include "algorithms/registry.h"
#include "comm/local_rings.h"
#include "config/params.h"
#include "core/hash.h"
#include "core/log.h"
#include "kernels/host/dtype.h"
#include "memory/shared_memory.h"
#include "topology/cache_size.h"
#include "topology/host_id.h"
#include "transports/tcp/tcp_transport.h"

namespace tccl {

namespace {

std::string SerializePeer(const PeerInfo& p, int nranks) {
  std::ostringstream o;
  o << p.rank << '\n' << p.pid << '\n' << nranks << '\n' << p.hostId << '\n' << p.hostName << '\n' << p.tcpAddr
    << '\n' << p.pidNs;
  return o.str();
}

bool ParsePeer(const std::string& s, PeerInfo* p, int* nranks) {
  std::istringstream in(s);
  std::string rank, pid, n;
  if (!std::getline(in, rank) || !std::getline(in, pid) || !std::getline(in, n) ||
      !std::getline(in, p->hostId) || !std::getline(in, p->hostName) || !std::getline(in, p->tcpAddr) ||
      !std::getline(in, p->pidNs))
    return false;
  p->rank = atoi(rank.c_str());
  p->pid = atoi(pid.c_str());
  *nranks = atoi(n.c_str());
  return true;
}

// How long a rank waits for a failed peer's reason in the store (and to write its own).
constexpr double kFailRecordWaitSec = 1.0;

std::string Hex(uint64_t v) {
  char b[20];
  snprintf(b, sizeof(b), "%016llx", (unsigned long long)v);
  return b;
}

}  // namespace

Status CommSettings::Resolve(const tcclConfig_t* config, CommSettings* out) {
  // Every parameter's value against its type and range first: what follows may rely on them.
  const std::string badParam = CheckParamValues();
  if (!badParam.empty()) return InvalidArgument("%s", badParam.c_str());
  CommSettings s;
  s.timeoutSec = (double)ParamInt("TIMEOUT");
  s.algo = ParamString("ALGO");
  std::string det = ParamString("DETERMINISM");
  for (char& ch : det) ch = (char)tolower((unsigned char)ch);  // any case, as the registry checks it
  if (det == "strict") s.determinism = tcclDeterminismStrict;
  else if (det == "run") s.determinism = tcclDeterminismRun;
  else return InvalidArgument("TCCL_DETERMINISM='%s' is not one of strict, run", det.c_str());
  if (config) {
    if (config->magic != TCCL_CONFIG_MAGIC || config->size < offsetof(tcclConfig_t, commName))
      return InvalidArgument("tcclConfig_t was not initialised with TCCL_CONFIG_INITIALIZER");
    if (config->timeoutSec != TCCL_CONFIG_UNDEF_INT) {
      if (config->timeoutSec <= 0) return InvalidArgument("config timeoutSec must be positive, got %d", config->timeoutSec);
      s.timeoutSec = config->timeoutSec;
    }
    if (config->determinism != TCCL_CONFIG_UNDEF_INT) {
      if (config->determinism != tcclDeterminismStrict && config->determinism != tcclDeterminismRun)
        return InvalidArgument("config determinism %d is not a tcclDeterminism_t", config->determinism);
      s.determinism = (tcclDeterminism_t)config->determinism;
    }
    if (config->blocking != TCCL_CONFIG_UNDEF_INT && config->blocking != 0 && config->blocking != 1)
      return InvalidArgument("config blocking must be 0 or 1, got %d", config->blocking);
    if (config->size >= offsetof(tcclConfig_t, commName) + sizeof(config->commName) && config->commName)
      s.name = config->commName;
    if (config->size >= offsetof(tcclConfig_t, algo) + sizeof(config->algo) && config->algo) s.algo = config->algo;
    if (config->size >= offsetof(tcclConfig_t, cudaDevice) + sizeof(config->cudaDevice) &&
        config->cudaDevice != TCCL_CONFIG_UNDEF_INT)
      s.cudaDevice = config->cudaDevice;
  }
  *out = s;
  return Status::Ok();
}

Status Communicator::Create(std::shared_ptr<StoreClient> store, uint64_t commId, const uint8_t secret[16],
                            int rank, int nranks, const CommSettings& settings,
                            std::unique_ptr<Communicator>* out) {
  const std::shared_ptr<StoreClient> keep = store;  // Join's failure may destroy its own reference
  Status st = Join(std::move(store), commId, secret, rank, nranks, settings, out);
  if (!st.ok()) AbandonJoin(*keep, commId, rank, nranks, st, settings.timeoutSec);
  return st;
}

void Communicator::AbandonJoin(StoreClient& store, uint64_t commId, int rank, int nranks, const Status& why,
                               double timeoutSec) {
  const std::string reason = Format("rank %d of %d (host %s, pid %d) could not join: %s", rank, nranks,
                                    HostName().c_str(), (int)getpid(), why.message().c_str());
  // Bounded: this rank is already failing and must not wait long to say so.
  Bootstrap::Abandon(store, StoreNamespace(commId), reason, Deadline::After(std::min(2.0, timeoutSec)));
}

std::string Communicator::StoreNamespace(uint64_t commId) { return "c" + Hex(commId); }

Status Communicator::Join(std::shared_ptr<StoreClient> store, uint64_t commId, const uint8_t secret[16], int rank,
                          int nranks, const CommSettings& settings, std::unique_ptr<Communicator>* out) {
  std::unique_ptr<Communicator> c(new Communicator());
  c->rank_ = rank;
  c->nranks_ = nranks;
  c->commId_ = commId;
  c->settings_ = settings;
  if (c->settings_.name.empty()) c->settings_.name = Hex(commId).substr(0, 8);
  auto boot = std::make_unique<Bootstrap>(std::move(store), StoreNamespace(commId), rank, nranks, settings.timeoutSec);
  // The memory domain: the config's, else the parent's (split), else the parameter; checked once here.
  if (c->settings_.cudaDevice == TCCL_CONFIG_UNDEF_INT) c->settings_.cudaDevice = (int)ParamInt("CUDA_DEVICE");
  if (c->settings_.cudaDevice < TCCL_CUDA_DEVICE_CURRENT)
    return InvalidArgument("the memory domain (tcclConfig_t.cudaDevice or TCCL_CUDA_DEVICE) must be -1 (host memory), "
                           "-2 (the current CUDA device) or a device ordinal, got %d",
                           c->settings_.cudaDevice);
  TCCL_RETURN_IF_ERROR(c->Setup(std::move(boot), secret));
  // A CUDA communicator: the host part above is its control plane (bootstrap, failure records,
  // host transports for staging across hosts); the device part adds device memory and kernels.
  if (c->settings_.cudaDevice != TCCL_HOST_MEMORY)
    TCCL_RETURN_IF_ERROR(CreateDeviceComm(c.get(), c->settings_.cudaDevice, &c->device_));
  *out = std::move(c);
  return Status::Ok();
}

Status Communicator::Setup(std::unique_ptr<Bootstrap> boot, const uint8_t secret[16]) {
  boot_ = std::move(boot);
  memcpy(secret_, secret, 16);
  TCCL_RETURN_IF_ERROR(ParseAlgoFilter(settings_.algo, &filter_));
  sliceBytes_ = (size_t)ParamInt("CHUNK_BYTES");
  const Deadline deadline = Deadline::After(settings_.timeoutSec);

  // Listen for TCP peers on the address that reaches the bootstrap root.
  int listenFd = -1;
  SockAddr bound;
  uint32_t ip = boot_->store()->LocalIp();
  if (!ParamString("SOCKET_ADDR").empty()) TCCL_RETURN_IF_ERROR(DefaultLocalIp(&ip));
  TCCL_RETURN_IF_ERROR(Listen(ip, 0, &listenFd, &bound));
  struct Closer {
    int fd;
    ~Closer() { close(fd); }
  } closer{listenFd};

  PeerInfo me{rank_, (int)getpid(), HostId(), HostName(), bound.ToString(), PidNamespace()};
  std::vector<std::string> all;
  TCCL_RETURN_IF_ERROR(boot_->AllGather(SerializePeer(me, nranks_), &all));
  peers_.resize(nranks_);
  for (int r = 0; r < nranks_; ++r) {
    int theirN = 0;
    if (!ParsePeer(all[r], &peers_[r], &theirN) || peers_[r].rank != r)
      return InternalError("bootstrap record of rank %d is malformed", r);
    if (theirN != nranks_)
      return InvalidUsage("rank %d (host %s, pid %d) joined with nranks=%d but this rank has nranks=%d", r,
                          peers_[r].hostName.c_str(), peers_[r].pid, theirN, nranks_);
  }

  // Ranks that share this host talk over shared memory, the others over TCP. Every rank of the
  // host maps the host's segment even when TCCL_SHM_DISABLE sends their data over TCP: its
  // failure record tells them of each other's failures (then with minimal rings).
  const bool shmOff = ParamBool("SHM_DISABLE");
  std::vector<int>& sameHost = sameHost_;
  std::vector<int> local, remote;
  for (int r = 0; r < nranks_; ++r) {
    if (peers_[r].hostId == me.hostId) sameHost.push_back(r);
    bool shmPeer = peers_[r].hostId == me.hostId && (!shmOff || r == rank_);
    (shmPeer ? local : remote).push_back(r);
  }
  std::string segName = "/tccl-" + Hex(commId_) + "-" + std::to_string(sameHost.front());
  std::vector<int> localPids;
  std::vector<bool> localSameProcess;
  for (int r : sameHost) {
    localPids.push_back(peers_[r].pid);
    localSameProcess.push_back(peers_[r].pid == me.pid && peers_[r].pidNs == me.pidNs);
  }
  const int64_t singleCopy = ParamInt("SHM_SINGLE_COPY_BYTES");  // ranges checked by CommSettings::Resolve
  const int64_t restart = ParamInt("SHM_RING_RESTART");
  TCCL_RETURN_IF_ERROR(ShmHost::Setup(*boot_, segName, sameHost, localPids, localSameProcess, rank_,
                                      shmOff ? 0 : (size_t)ParamInt("SHM_RING_BYTES"),
                                      shmOff ? 0 : (size_t)singleCopy, registrations_.get(),
                                      restart < 0    ? RingRestart::Auto
                                      : restart == 0 ? RingRestart::Never
                                                     : RingRestart::Always,
                                      &shm_));
  allLocal_ = remote.empty();
  if (allLocal_) cost_.singleCopyBytes = shm_->SingleCopy().minBytes;
  if (allLocal_ && shm_->SingleCopy().everyoneMaps) sharedScratchBytes_ = shm_->SingleCopy().minBytes;
  cost_.sharedScratchBytes = sharedScratchBytes_;

  TcpSetup tcp;
  tcp.me = rank_;
  tcp.commId = commId_;
  memcpy(tcp.secret, secret_, 16);
  tcp.listenFd = listenFd;
  tcp.peers = peers_;
  tcp.remote = remote;
  std::map<int, std::unique_ptr<Connection>> tcpConns;
  TCCL_RETURN_IF_ERROR(ConnectTcpPeers(tcp, deadline, &tcpConns));

  const int cores = UsableCores();
  const bool oversubscribed = (int)sameHost.size() > cores;
  allToAllByCma_ = shm_ && shm_->SingleCopy().minBytes > 0 &&
                   AllToAllByCma(sameHost.size(), oversubscribed, shm_->RingBytes(), LastLevelCacheBytes());
  conns_.resize(nranks_);
  for (int r : local)
    if (r != rank_) conns_[r] = shm_->ConnectionTo(r, /*eachRankHasACore=*/!oversubscribed);
  for (auto& [r, c] : tcpConns) conns_[r] = std::move(c);

  std::vector<int> pids(nranks_);
  std::vector<bool> watch(nranks_);
  for (int r = 0; r < nranks_; ++r) {
    pids[r] = peers_[r].pid;
    watch[r] = peers_[r].hostId == me.hostId && !me.pidNs.empty() && peers_[r].pidNs == me.pidNs;
  }
  monitor_ = std::make_unique<PeerMonitor>(pids, watch);
  flight_ = std::make_unique<FlightRecorder>((size_t)std::max<int64_t>(0, ParamInt("FLIGHT_RECORDER_ENTRIES")));
  RegisterForSignalDump(this, [this] { TCCL_WARN(kLogColl, "%s", DumpFlightRecorder().c_str()); });

  // The machine model for algorithm selection: read from its cache file, or measured, by the
  // host's first rank while the others wait in the store (so the measurement has the cores).
  const std::string tuneKey = "tune/" + Hex(commId_) + "/" + std::to_string(sameHost.front());
  if (rank_ == sameHost.front()) {
    cost_.machine = LoadOrMeasureMachine();
    TCCL_RETURN_IF_ERROR(boot_->store()->Set(tuneKey, cost_.machine.Serialize(), deadline));
  } else {
    std::string text;
    TCCL_RETURN_IF_ERROR(boot_->store()->Get(tuneKey, deadline, &text));
    TCCL_RETURN_IF_ERROR(MachineModel::Parse(text, &cost_.machine));
    cost_.machine.source = "from rank " + std::to_string(sameHost.front());
  }
  cost_.host.localRanks = (int)sameHost.size();
  cost_.host.cores = cores;
  waiter_ = std::make_unique<Waiter>(local.size() > 1 ? shm_->MyDoorbell() : nullptr, oversubscribed,
                                     (int)ParamInt("SPIN_US"), (int)ParamInt("YIELD_US"));
  env_.rank = rank_;
  env_.nranks = nranks_;
  env_.waiter = waiter_.get();
  env_.aborted = &aborted_;
  env_.timeoutSec = settings_.timeoutSec;
  env_.describePeer = [this](int r) { return DescribePeer(r); };
  env_.health = [this](const std::vector<int>& waitingOn) { return Health(false, &waitingOn); };
  env_.diagnose = [this] { return monitor_->Diagnose([this](int r) { return DescribePeer(r); }); };
  for (int r = 0; r < nranks_; ++r) env_.conns.push_back(conns_[r].get());
  env_.copyToSharedScratch = &SharedScratchCopy::Copy;
  env_.copyCtx = &sharedScratchCopy_;
  TCCL_RETURN_IF_ERROR(boot_->Barrier());

  if (rank_ == 0 && (LogEnabled(LogLevel::Info, kLogTuning) || LogSubsysNamed(kLogTuning))) {
    std::string table = DecisionTable(nranks_, settings_.determinism == tcclDeterminismStrict, filter_, cost_);
    for (size_t at = 0, nl; at < table.size(); at = nl + 1) {
      nl = table.find('\n', at);
      if (nl == std::string::npos) nl = table.size();
      LogNamed(kLogTuning, "%s", table.substr(at, nl - at).c_str());
    }
  }
  if (rank_ == 0 || LogEnabled(LogLevel::Info, kLogInit)) {
    const char* det = settings_.determinism == tcclDeterminismStrict ? "strict" : "run";
    TCCL_INFO(kLogInit,
              "tccl %d.%d.%d init: %s rank %d nranks %d, memory domain %s, transports shm:%zu tcp:%zu, "
              "determinism %s, kernels %s, %d cores%s, timeout %.0f s",
              TCCL_MAJOR, TCCL_MINOR, TCCL_PATCH, Describe().c_str(), rank_, nranks_,
              settings_.cudaDevice == TCCL_HOST_MEMORY ? "host" : "cuda (device part: next line)", local.size() - 1,
              remote.size(), det, IsaName(BestIsa()), cores, oversubscribed ? " (oversubscribed: no spinning)" : "",
              settings_.timeoutSec);
  }
  return Status::Ok();
}

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

std::string Communicator::FailKey(int rank) const { return "fail/" + Hex(commId_) + "/" + std::to_string(rank); }

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
                             const FlightEntry& entry, uint64_t seq, const std::function<std::string()>& describe) {
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
  Status st = tccl::Execute(s, bufs, k, env, describe);
  flight_->Finish(slot, st.ok());
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
  const bool covered = (!sendUsed || SingleCopyCovers(cfg, send, b.send)) && SingleCopyCovers(cfg, recv, b.recv);
  return covered ? cfg.minBytes : 0;
}

Status Communicator::RunCollective(const CollArgs& in, tcclDataType_t dt, const void* send, void* recv) {
  std::lock_guard<OpLock> g(opLock_);
  if (aborted()) return InvalidUsage("%s was aborted; destroy it and create a new one", Describe().c_str());
  CollArgs a = in;
  a.rank = rank_;
  a.nranks = nranks_;
  a.elemSize = DtypeSize(dt);
  a.sliceElems = std::max<size_t>(1, sliceBytes_ / a.elemSize);
  const bool reduces = a.kind == CollKind::AllReduce || a.kind == CollKind::ReduceScatter || a.kind == CollKind::Reduce;
  a.requireCanonical = reduces && settings_.determinism == tcclDeterminismStrict && DtypeIsFloat(dt) &&
                       (a.op == tcclSum || a.op == tcclProd || a.op == tcclAvg);
  a.singleCopyBytes = SingleCopyBytesFor(a, send, recv);
  a.sharedScratchBytes = sharedScratchBytes_;
  const Plan* plan = plans_.Find(a, dt);
  if (!plan) {
    Plan fresh;
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
    const CallBufferBytes b = BufferBytes(a);
    const bool pastCache = OutgrowsLastLevelCache(sameHost_.size() * (b.recv + (a.inPlace ? 0 : b.send)));
    fresh.kernels.streamFinalCopies = pastCache;
    if (shm_) {
      const size_t rings = LocalRingsWritten(*fresh.alg, a, sameHost_);
      fresh.shm.ringRestart = shm_->RingRestartFor(rings);
      fresh.shm.streamOutputs = pastCache;
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
  // The closure captures two pointers, so std::function keeps it inline (no allocation per call).
  struct Which {
    const FlightEntry* record;
    uint64_t seq;
  } which{&plan->record, seq};
  const Which* what = &which;
  auto describe = [this, what] {
    const FlightEntry& r = *what->record;
    return std::string(r.op) + " #" + std::to_string(what->seq) + " (" + std::to_string(r.count) + " x " + r.dtype +
           ", " + r.algo + ") on " + Describe();
  };
  TCCL_TRACE(kLogColl, "%s: %zu steps", describe().c_str(), s.steps.size());
  collBufs_.resize(3);
  collBufs_[kSendBuf] = const_cast<void*>(send);
  collBufs_[kRecvBuf] = recv;
  collBufs_[kScratchBuf] = nullptr;
  // Where AllToAllByCma holds, an all-to-all offers what it sends from for this call as if
  // registered: out of place its send buffer, in place (where AllToAllScratchByCma holds) the
  // scratch its blocks are set aside in. Its large blocks are then read by the receiver with CMA.
  // Only the transport changes: the algorithm was chosen above as for plain buffers, and each
  // message's header says how to read it, so ranks need not agree on this.
  const size_t blockBytes = a.count * a.elemSize;
  const bool fromScratch = send == recv;
  const bool offerByCma = allToAllByCma_ && a.kind == CollKind::AllToAll && blockBytes >= shm_->SingleCopy().minBytes &&
                          (!fromScratch || AllToAllScratchByCma(sameHost_.size(), blockBytes, LastLevelCacheBytes()));
  ScopedRegistration offer(offerByCma ? registrations_.get() : nullptr,
                           fromScratch && offerByCma ? ScratchFor(s, a.elemSize) : send,
                           fromScratch ? s.scratchElems * a.elemSize : blockBytes * nranks_);
  return Execute(s, plan->kernels, collBufs_, tag, plan->record, seq, describe);
}

Status Communicator::RunP2P(const std::vector<P2POp>& ops) {
  std::lock_guard<OpLock> g(opLock_);
  if (aborted()) return InvalidUsage("%s was aborted; destroy it and create a new one", Describe().c_str());
  if (shm_) shm_->SetOperation({shm_->RingRestartFor(LocalRingsWritten(ops, rank_, sameHost_))});
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

Status Communicator::Split(int color, int key, const CommSettings& settings, std::unique_ptr<Communicator>* out) {
  std::lock_guard<OpLock> g(opLock_);
  TCCL_RETURN_IF_ERROR(Broken());
  std::vector<std::string> all;
  TCCL_RETURN_IF_ERROR(boot_->AllGather(std::to_string(color) + " " + std::to_string(key), &all));
  uint64_t splitSeq = splitSeq_++;
  out->reset();
  if (color == TCCL_SPLIT_NOCOLOR) return Status::Ok();
  std::vector<std::pair<int, int>> members;  // (key, parent rank)
  for (int r = 0; r < nranks_; ++r) {
    int c = 0, k = 0;
    if (sscanf(all[r].c_str(), "%d %d", &c, &k) != 2) return InternalError("malformed split record from rank %d", r);
    if (c == color) members.emplace_back(k, r);
  }
  std::sort(members.begin(), members.end());
  int newRank = 0;
  for (size_t i = 0; i < members.size(); ++i)
    if (members[i].second == rank_) newRank = (int)i;
  uint64_t childId = Mix64(commId_ ^ Mix64(splitSeq * 0x100000001ull + (uint32_t)color));
  CommSettings s = settings;
  if (s.name.empty()) s.name = settings_.name + "/" + std::to_string(color);
  if (s.cudaDevice == TCCL_CONFIG_UNDEF_INT) s.cudaDevice = cudaDevice();  // the child stays in our domain
  return Create(boot_->store(), childId, secret_, newRank, (int)members.size(), s, out);
}

}  // namespace tccl
