#include "device/cuda_comm.h"

#include <unistd.h>

#include <chrono>
#include <cinttypes>

#include "comm/communicator.h"
#include "config/params.h"
#include "core/log.h"
#include "device/cuda_util.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/host/dtype.h"

namespace tccl {

namespace {

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

Status CreateDeviceComm(Communicator* host, int device, std::unique_ptr<DeviceComm>* out) {
  return CudaComm::Create(host, device, out);
}

Status CudaComm::Create(Communicator* host, int device, std::unique_ptr<DeviceComm>* out) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    cudaGetLastError();
    return InvalidUsage("%s: a CUDA communicator was requested but no CUDA device is usable here (%s); use "
                        "TCCL_CUDA_DEVICE=-1 for host memory",
                        host->Describe().c_str(), e == cudaSuccess ? "0 devices" : cudaGetErrorString(e));
  }
  if (device == TCCL_CUDA_DEVICE_CURRENT) TCCL_CUDA_RETURN(cudaGetDevice(&device), "cudaGetDevice");
  if (device < 0 || device >= count)
    return InvalidArgument("%s: CUDA device %d does not exist (this process sees %d)", host->Describe().c_str(), device,
                           count);
  DeviceGuard guard(device);
  TCCL_CUDA_RETURN(cudaSetDevice(device), "cudaSetDevice");
  {
    static std::mutex mu;
    static bool loaded[256] = {false};
    std::lock_guard<std::mutex> g(mu);
    if (device < 256 && !loaded[device]) {
      TCCL_CUDA_RETURN(cuda::PreloadTreeKernels(), "loading the reduction kernels");
      loaded[device] = true;
    }
  }
  std::unique_ptr<CudaComm> c(new CudaComm());
  c->host_ = host;
  c->device_ = device;
  c->timeoutSec_ = host->settings().timeoutSec;
  const int N = host->nranks(), me = host->rank();
  const PeerInfo& self = host->peer(me);
  std::vector<bool> sameProcess(N, false);
  c->ipc_ = true;
  for (int r = 0; r < N; ++r) {
    const PeerInfo& p = host->peer(r);
    if (p.hostId != self.hostId) c->ipc_ = false;
    sameProcess[r] = p.hostId == self.hostId && p.pid == self.pid && p.pidNs == self.pidNs;
  }
  const int64_t area = ParamInt("CUDA_AREA_BYTES");  // at least a page (its range in the registry)
  if (c->ipc_) {
    TCCL_RETURN_IF_ERROR(StreamMemOps::Get(&c->memops_));
    TCCL_RETURN_IF_ERROR(IpcWindow::Create(host->bootstrap(), me, N, sameProcess, (size_t)area, &c->window_));
    c->barrier_ = std::make_unique<StreamBarrier>(c->window_.get(), me, N, c->memops_);
    c->group_ = IpcGroup{c->window_.get(), c->barrier_.get(), me, N};
  } else {
    TCCL_RETURN_IF_ERROR(HostStaging::Create(host, (size_t)area, &c->staged_));
  }
  TCCL_CUDA_RETURN(cudaStreamCreateWithFlags(&c->side_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  c->watchdog_ = std::thread([p = c.get()] { p->Watch(); });
  TCCL_INFO(kLogInit, "%s: CUDA device %d, %s (%lld-byte areas per rank)", host->Describe().c_str(), device,
            c->ipc_ ? "CUDA IPC among the ranks of this host" : "device data staged through host memory across hosts",
            (long long)area);
  *out = std::move(c);
  return Status::Ok();
}

CudaComm::~CudaComm() {
  // Work of this rank still waiting for peers (a failed or aborted communicator) is let through
  // before the window it reads is freed.
  DrainReleased(2.0);
  stop_.store(true);
  cv_.notify_all();
  if (watchdog_.joinable()) watchdog_.join();
  DeviceGuard guard(device_);
  for (auto& p : pending_) cudaEventDestroy(p.done);
  for (auto ev : spareEvents_) cudaEventDestroy(ev);
  staged_.reset();
  window_.reset();
  if (side_) cudaStreamDestroy(side_);
}

void CudaComm::DrainReleased(double seconds) {
  if (!released_.load() || !barrier_) return;
  DeviceGuard guard(device_);
  const double end = Now() + seconds;
  while (Now() < end) {
    bool busy = false;
    {
      std::lock_guard<std::mutex> g(mu_);
      for (auto& p : pending_) busy |= cudaEventQuery(p.done) == cudaErrorNotReady;
    }
    if (!busy) break;
    barrier_->ReleaseOnce(side_);
    usleep(1000);
  }
}

void CudaComm::Release() {
  released_.store(true);  // the watchdog does the device writes (this may run in a stream callback)
  cv_.notify_all();
}

bool CudaComm::Addressable(const void* p) const {
  cudaPointerAttributes attr;
  if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return attr.type == cudaMemoryTypeDevice || attr.type == cudaMemoryTypeManaged ||
         (attr.type == cudaMemoryTypeHost && attr.devicePointer != nullptr);
}

Status CudaComm::Track(cudaStream_t s, const std::string& what) {
  if (Capturing(s)) return Status::Ok();  // a graph's work is launched later, by the user
  cudaEvent_t ev;
  if (!spareEvents_.empty()) {
    ev = spareEvents_.back();
    spareEvents_.pop_back();
  } else {
    TCCL_CUDA_RETURN(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming), "cudaEventCreate");
  }
  TCCL_CUDA_RETURN(cudaEventRecord(ev, s), "cudaEventRecord");
  pending_.push_back(Pending{ev, Now(), what});
  return Status::Ok();
}

Status CudaComm::Enqueue(const CollArgs& in, tcclDataType_t dt, const void* send, void* recv, void* stream) {
  std::lock_guard<std::mutex> g(mu_);
  TCCL_RETURN_IF_ERROR(host_->Usable());
  DeviceGuard guard(device_);
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  CollArgs a = in;
  a.rank = host_->rank();
  a.nranks = host_->nranks();
  a.elemSize = DtypeSize(dt);
  const uint64_t seq = seq_++;
  Status st = ipc_ ? EnqueueIpcCollective(group_, a, dt, send, recv, s) : staged_->Enqueue(a, dt, send, recv, s);
  if (st.ok()) {
    char what[160];
    snprintf(what, sizeof(what), "device operation #%" PRIu64 " (%s, count %zu, %s)", seq, CollName(a.kind), a.count,
             DtypeName(dt));
    st = Track(s, what);
  }
  if (!st.ok()) {
    // A half-enqueued operation leaves the ranks out of step: the communicator cannot go on.
    Status failed(st.code(), host_->Describe() + ": " + st.message());
    host_->ReportFailure(failed);
    return failed;
  }
  return Status::Ok();
}

void CudaComm::Watch() {
  cudaSetDevice(device_);
  while (!stop_.load()) {
    {
      std::unique_lock<std::mutex> lk(mu_);
      cv_.wait_for(lk, std::chrono::milliseconds(released_.load() ? 2 : 20));
      if (stop_.load()) break;
      // Retire completed operations; time out the oldest incomplete one.
      while (!pending_.empty()) {
        cudaError_t q = cudaEventQuery(pending_.front().done);
        if (q == cudaErrorNotReady) break;
        if (q != cudaSuccess) {
          std::string what = pending_.front().what;
          lk.unlock();
          host_->ReportFailure(DeviceError("%s: %s failed on the device: %s", host_->Describe().c_str(), what.c_str(),
                                           cudaGetErrorString(q)));
          lk.lock();
          break;
        }
        spareEvents_.push_back(pending_.front().done);
        pending_.pop_front();
      }
      if (!pending_.empty() && !released_.load() && Now() - pending_.front().enqueuedAt > timeoutSec_) {
        std::string what = pending_.front().what;
        lk.unlock();
        host_->ReportFailure(Timeout("%s: %s did not complete within %g s (TCCL_TIMEOUT): a peer did not issue the "
                                     "same operation, or its stream is blocked",
                                     host_->Describe().c_str(), what.c_str(), timeoutSec_));
        lk.lock();
      }
    }
    if (!released_.load()) {
      Status peers = host_->CheckPeers();
      if (!peers.ok()) host_->ReportFailure(peers);
    }
    if (released_.load() && barrier_) barrier_->ReleaseOnce(side_);
  }
}

}  // namespace tccl
