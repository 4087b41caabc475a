// Joining a communicator: its settings (parameters and tcclConfig_t), the bootstrap over the
// store, the peers' exchange, transports (shared memory on the host, TCP across hosts), the
// machine model, the device part; a rank that cannot join abandons the store namespace
// (AbandonJoin); and Split, which joins a child. The operations are in communicator.cc.
#include "comm/communicator.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <sstream>

#include "algorithms/registry.h"
#include "config/params.h"
#include "core/hash.h"
#include "core/log.h"
#include "kernels/host/dtype.h"
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

}  // namespace

std::string Communicator::IdHex(uint64_t v) {
  char b[20];
  snprintf(b, sizeof(b), "%016llx", (unsigned long long)v);
  return b;
}

Status CommSettings::Resolve(const tcclConfig_t* config, CommSettings* out) {
  // Every parameter's value against its type and range first: what follows may rely on them.
  const std::string badParam = CheckParamValues();
  if (!badParam.empty()) return InvalidArgument("%s", badParam.c_str());
  CommSettings s;
  s.timeoutSec = (double)ParamInt("TIMEOUT");
  s.algo = ParamString("ALGO");
  const std::string det = ParamString("DETERMINISM");  // as the registry spells it, in any case written
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

std::string Communicator::StoreNamespace(uint64_t commId) { return "c" + IdHex(commId); }

Status Communicator::Join(std::shared_ptr<StoreClient> store, uint64_t commId, const uint8_t secret[16], int rank,
                          int nranks, const CommSettings& settings, std::unique_ptr<Communicator>* out) {
  std::unique_ptr<Communicator> c(new Communicator());
  c->rank_ = rank;
  c->nranks_ = nranks;
  c->commId_ = commId;
  c->settings_ = settings;
  if (c->settings_.name.empty()) c->settings_.name = IdHex(commId).substr(0, 8);
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
  std::string segName = "/tccl-" + IdHex(commId_) + "-" + std::to_string(sameHost.front());
  std::vector<int> localPids;
  std::vector<bool> localSameProcess;
  for (int r : sameHost) {
    localPids.push_back(peers_[r].pid);
    localSameProcess.push_back(peers_[r].pid == me.pid && peers_[r].pidNs == me.pidNs);
  }
  // The machine model for algorithm selection (and for how the shared memory below exchanges
  // plain buffers): read from its cache file, or measured, by the host's first rank while the
  // others wait in the store (so the measurement has the cores). Every rank of the host gets the
  // same model, so they agree on the rules drawn from it.
  const std::string tuneKey = "tune/" + IdHex(commId_) + "/" + std::to_string(sameHost.front());
  if (rank_ == sameHost.front()) {
    cost_.machine = LoadOrMeasureMachine();
    TCCL_RETURN_IF_ERROR(boot_->store()->Set(tuneKey, cost_.machine.Serialize(), deadline));
  } else {
    std::string text;
    TCCL_RETURN_IF_ERROR(boot_->store()->Get(tuneKey, deadline, &text));
    TCCL_RETURN_IF_ERROR(MachineModel::Parse(text, &cost_.machine));
    cost_.machine.source = "from rank " + std::to_string(sameHost.front());
  }
  exchangesByCma_ = ExchangesByCma(cost_.machine, sameHost.size());
  const int cores = UsableCores();
  const bool oversubscribed = (int)sameHost.size() > cores;
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
  if (allLocal_) cost_.lineMessageBytes = kLineMessagePayloadBytes;

  TcpSetup tcp;
  tcp.me = rank_;
  tcp.commId = commId_;
  memcpy(tcp.secret, secret_, 16);
  tcp.listenFd = listenFd;
  tcp.peers = peers_;
  tcp.remote = remote;
  std::map<int, std::unique_ptr<Connection>> tcpConns;
  TCCL_RETURN_IF_ERROR(ConnectTcpPeers(tcp, deadline, &tcpConns));

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
