// C API: versions, errors, unique ids and communicator lifetime.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <unistd.h>

#include <cstring>
#include <thread>
#include <vector>

#include "api/handles.h"
#include "bootstrap/launcher_env.h"
#include "bootstrap/store_server.h"
#include "bootstrap/unique_id.h"
#include "config/params.h"
#include "core/log.h"

using namespace tccl;

extern "C" {

tcclResult_t tcclGetVersion(int* version) {
  return ApiCall([&] {
    if (!version) return InvalidArgument("tcclGetVersion: version is NULL");
    *version = TCCL_VERSION_CODE;
    return Status::Ok();
  });
}

const char* tcclGetErrorString(tcclResult_t r) {
  switch (EnumArg(r)) {
    case tcclSuccess: return "no error";
    case tcclUnhandledDeviceError: return "unhandled device error";
    case tcclSystemError: return "unhandled system error (network, shared memory, resources)";
    case tcclInternalError: return "internal error (a tccl bug)";
    case tcclInvalidArgument: return "invalid argument";
    case tcclInvalidUsage: return "invalid usage";
    case tcclRemoteError: return "remote process exited or there was a network error";
    case tcclInProgress: return "operation in progress";
    case tcclTimeout: return "operation timed out";
    default: return "unknown result code";
  }
}

const char* tcclGetLastError(tcclComm_t) { return LastError(); }

tcclResult_t tcclGetUniqueId(tcclUniqueId* uniqueId) {
  return ApiCall([&] {
    if (!uniqueId) return InvalidArgument("tcclGetUniqueId: uniqueId is NULL");
    UniqueIdData d;
    RandomBytes(d.secret, sizeof(d.secret));
    RandomBytes(&d.commId, sizeof(d.commId));
    uint32_t ip = 0;
    TCCL_RETURN_IF_ERROR(DefaultLocalIp(&ip));
    SockAddr bound;
    // Listen on every interface; advertise the one other hosts can reach.
    TCCL_RETURN_IF_ERROR(StartStoreServer(htonl(INADDR_ANY), 0, d.secret, &bound));
    d.ip = ip;
    d.port = bound.port;
    PackUniqueId(d, uniqueId);
    return Status::Ok();
  });
}

static Status InitRank(tcclComm_t* comm, int nranks, const tcclUniqueId& id, int rank, const tcclConfig_t* config) {
  if (!comm) return InvalidArgument("tcclCommInitRank: comm is NULL");
  *comm = nullptr;
  if (nranks < 1) return InvalidArgument("tcclCommInitRank: nranks must be at least 1, got %d", nranks);
  if (rank < 0 || rank >= nranks)
    return InvalidArgument("tcclCommInitRank: rank %d is outside [0, %d)", rank, nranks);
  UniqueIdData d;
  TCCL_RETURN_IF_ERROR(UnpackUniqueId(id, &d));
  CommSettings settings;
  const Status resolved = CommSettings::Resolve(config, &settings);
  if (!resolved.ok()) {
    // The other ranks wait for this one in the bootstrap: reach the store briefly to tell them.
    std::shared_ptr<StoreClient> store;
    if (StoreClient::Connect(d.Addr(), d.secret, Deadline::After(2.0), &store).ok())
      Communicator::AbandonJoin(*store, d.commId, rank, nranks, resolved, 2.0);
    return resolved;
  }
  std::shared_ptr<StoreClient> store;
  TCCL_RETURN_IF_ERROR(StoreClient::Connect(d.Addr(), d.secret, Deadline::After(settings.timeoutSec), &store));
  std::unique_ptr<Communicator> c;
  Status st = Communicator::Create(store, d.commId, d.secret, rank, nranks, settings, &c);
  if (!st.ok()) return Status(st.code(), "rank " + std::to_string(rank) + " of " + std::to_string(nranks) + ": " + st.message());
  *comm = RegisterComm(std::move(c));
  return Status::Ok();
}

tcclResult_t tcclCommInitRank(tcclComm_t* comm, int nranks, tcclUniqueId commId, int rank) {
  return ApiCall([&] { return InitRank(comm, nranks, commId, rank, nullptr); });
}

tcclResult_t tcclCommInitRankConfig(tcclComm_t* comm, int nranks, tcclUniqueId commId, int rank,
                                    tcclConfig_t* config) {
  return ApiCall([&] { return InitRank(comm, nranks, commId, rank, config); });
}

tcclResult_t tcclCommInitAll(tcclComm_t* comms, int ndev, const int* devlist) {
  return ApiCall([&]() -> Status {
    if (!comms) return InvalidArgument("tcclCommInitAll: comms is NULL");
    if (ndev < 1) return InvalidArgument("tcclCommInitAll: ndev must be at least 1, got %d", ndev);
    for (int r = 0; devlist && r < ndev; ++r)
      if (devlist[r] < TCCL_CUDA_DEVICE_CURRENT)
        return InvalidArgument("tcclCommInitAll: devlist[%d] = %d is not a CUDA device ordinal (or -1 host memory, "
                               "-2 the current device)",
                               r, devlist[r]);
    tcclUniqueId id;
    if (tcclGetUniqueId(&id) != tcclSuccess) return SystemError("%s", LastError());
    std::vector<Status> results(ndev);
    std::vector<std::thread> threads;
    for (int r = 0; r < ndev; ++r)
      threads.emplace_back([&, r] {
        try {
          tcclConfig_t config = TCCL_CONFIG_INITIALIZER;
          if (devlist) config.cudaDevice = devlist[r];
          results[r] = InitRank(&comms[r], ndev, id, r, devlist ? &config : nullptr);
        } catch (const std::exception& e) {
          results[r] = InternalError("%s", e.what());
        }
      });
    for (auto& t : threads) t.join();
    for (int r = 0; r < ndev; ++r) {
      if (results[r].ok()) continue;
      for (int q = 0; q < ndev; ++q)
        if (results[q].ok() && comms[q]) UnregisterComm(comms[q]);
      for (int q = 0; q < ndev; ++q) comms[q] = nullptr;
      return results[r];
    }
    return Status::Ok();
  });
}

tcclResult_t tcclCommInitFromEnv(tcclComm_t* comm, tcclConfig_t* config) {
  return ApiCall([&]() -> Status {
    if (!comm) return InvalidArgument("tcclCommInitFromEnv: comm is NULL");
    LaunchInfo li;
    TCCL_RETURN_IF_ERROR(ReadLauncherEnv(&li));
    // A rank whose settings are refused still agrees on the id, so that InitRank can tell the
    // others it will not join (they would wait for it until their deadline); InitRank returns why.
    CommSettings settings;
    const double timeoutSec =
        CommSettings::Resolve(config, &settings).ok() ? settings.timeoutSec : (double)ParamInt("TIMEOUT");
    tcclUniqueId id;
    std::string rdzvFile;
    TCCL_RETURN_IF_ERROR(AgreeOnUniqueId(li, timeoutSec, &id, &rdzvFile));
    TCCL_INFO(kLogInit, "tcclCommInitFromEnv: launcher %s, rank %d of %d, local rank %d, rendezvous %s", li.launcher.c_str(),
              li.rank, li.size, li.localRank, li.masterAddr.empty() ? "file" : li.masterAddr.c_str());
    Status st = InitRank(comm, li.size, id, li.rank, config);
    if (!rdzvFile.empty()) unlink(rdzvFile.c_str());  // every rank has joined (or failed): no longer needed
    return st;
  });
}

tcclResult_t tcclCommSplit(tcclComm_t comm, int color, int key, tcclComm_t* newcomm, tcclConfig_t* config) {
  return ApiCall([&]() -> Status {
    CommRef c;
    TCCL_RETURN_IF_ERROR(AcquireComm(comm, "tcclCommSplit", &c));
    if (!newcomm) return InvalidArgument("tcclCommSplit: newcomm is NULL");
    *newcomm = nullptr;
    if (color < 0 && color != TCCL_SPLIT_NOCOLOR)
      return InvalidArgument("tcclCommSplit: color %d is negative (use TCCL_SPLIT_NOCOLOR to opt out)", color);
    CommSettings settings;
    TCCL_RETURN_IF_ERROR(CommSettings::Resolve(config, &settings));
    std::unique_ptr<Communicator> child;
    TCCL_RETURN_IF_ERROR(c->Split(color, key, settings, &child));
    if (child) *newcomm = RegisterComm(std::move(child));
    return Status::Ok();
  });
}

tcclResult_t tcclCommFinalize(tcclComm_t comm) {
  return ApiCall([&] {  // blocking operations are complete on return; nothing is left to flush
    CommRef c;
    return AcquireComm(comm, "tcclCommFinalize", &c);
  });
}

tcclResult_t tcclCommDestroy(tcclComm_t comm) {
  return ApiCall([&]() -> Status {
    if (!comm) return Status::Ok();  // as NCCL: destroying NULL is a no-op
    // The communicator is freed when the last operation using it (possibly queued on a stream) ends.
    if (!UnregisterComm(comm))
      return InvalidArgument("tcclCommDestroy: comm %p is not a live communicator (destroyed twice?)", (void*)comm);
    return Status::Ok();
  });
}

tcclResult_t tcclCommAbort(tcclComm_t comm) {
  return ApiCall([&]() -> Status {
    if (!comm) return Status::Ok();
    // As in NCCL, abort also frees the handle. Operations blocked in it see the flag within one
    // sleep period (10 ms) and return; the communicator is freed when the last of them leaves.
    std::shared_ptr<Communicator> c = UnregisterComm(comm);
    if (!c) return InvalidArgument("tcclCommAbort: comm %p is not a live communicator", (void*)comm);
    c->Abort();
    return Status::Ok();
  });
}

tcclResult_t tcclCommGetAsyncError(tcclComm_t comm, tcclResult_t* asyncError) {
  return ApiCall([&]() -> Status {
    CommRef c;
    TCCL_RETURN_IF_ERROR(AcquireComm(comm, "tcclCommGetAsyncError", &c));
    if (!asyncError) return InvalidArgument("tcclCommGetAsyncError: asyncError is NULL");
    *asyncError = c->asyncError();
    return Status::Ok();
  });
}

tcclResult_t tcclCommDumpFlightRecorder(tcclComm_t comm, char* buf, size_t size) {
  return ApiCall([&]() -> Status {
    CommRef c;
    TCCL_RETURN_IF_ERROR(AcquireComm(comm, "tcclCommDumpFlightRecorder", &c));
    std::string text = c->DumpFlightRecorder();
    if (!buf) {
      TCCL_WARN(kLogColl, "%s", text.c_str());
      return Status::Ok();
    }
    if (size == 0) return InvalidArgument("tcclCommDumpFlightRecorder: size is 0 with a non-NULL buf");
    snprintf(buf, size, "%s", text.c_str());
    return Status::Ok();
  });
}

tcclResult_t tcclCommCount(const tcclComm_t comm, int* count) {
  return ApiCall([&]() -> Status {
    CommRef c;
    TCCL_RETURN_IF_ERROR(AcquireComm(comm, "tcclCommCount", &c));
    if (!count) return InvalidArgument("tcclCommCount: count is NULL");
    *count = c->nranks();
    return Status::Ok();
  });
}

tcclResult_t tcclCommUserRank(const tcclComm_t comm, int* rank) {
  return ApiCall([&]() -> Status {
    CommRef c;
    TCCL_RETURN_IF_ERROR(AcquireComm(comm, "tcclCommUserRank", &c));
    if (!rank) return InvalidArgument("tcclCommUserRank: rank is NULL");
    *rank = c->rank();
    return Status::Ok();
  });
}

tcclResult_t tcclCommCuDevice(const tcclComm_t comm, int* device) {
  return ApiCall([&]() -> Status {
    CommRef c;
    TCCL_RETURN_IF_ERROR(AcquireComm(comm, "tcclCommCuDevice", &c));
    if (!device) return InvalidArgument("tcclCommCuDevice: device is NULL");
    *device = c->cudaDevice();
    return Status::Ok();
  });
}

}  // extern "C"
