#include "device/cuda_staged.h"

#include <algorithm>
#include <vector>

#include "comm/communicator.h"
#include "core/log.h"
#include "device/cuda_util.h"

namespace tccl {

namespace {

struct HostCallArgs {
  std::shared_ptr<StagingLink> link;
  CollArgs args;
  tcclDataType_t dt;
  const void* send;
  void* recv;
  bool owned;  // deleted after running (not when captured in a graph, which replays it)
};

// A CUDA graph may replay a captured callback any number of times, after the communicator is
// gone: its arguments are kept for the life of the process.
std::mutex g_capturedMu;
std::vector<std::unique_ptr<HostCallArgs>>& Captured() {
  static auto* v = new std::vector<std::unique_ptr<HostCallArgs>>();
  return *v;
}

void CUDART_CB RunHostCollective(void* p) {
  auto* a = static_cast<HostCallArgs*>(p);
  {
    std::lock_guard<std::mutex> g(a->link->mu);
    // A failure marks the communicator failed (its Fail path records it; device waits are
    // released); the callback itself has nobody to return it to.
    if (a->link->host && a->link->host->Usable().ok()) a->link->host->RunCollective(a->args, a->dt, a->send, a->recv);
  }
  if (a->owned) delete a;
}

char* At(const void* p, size_t off) { return const_cast<char*>(static_cast<const char*>(p)) + off; }

}  // namespace

Status HostStaging::Create(Communicator* host, size_t bytes, std::unique_ptr<HostStaging>* out) {
  std::unique_ptr<HostStaging> h(new HostStaging());
  h->host_ = host;
  h->bytes_ = bytes;
  h->link_ = std::make_shared<StagingLink>();
  h->link_->host = host;
  TCCL_CUDA_RETURN(cudaHostAlloc(reinterpret_cast<void**>(&h->sendStage_), bytes, cudaHostAllocPortable),
                   "cudaHostAlloc of the staging buffer");
  TCCL_CUDA_RETURN(cudaHostAlloc(reinterpret_cast<void**>(&h->recvStage_), bytes, cudaHostAllocPortable),
                   "cudaHostAlloc of the staging buffer");
  *out = std::move(h);
  return Status::Ok();
}

HostStaging::~HostStaging() {
  {
    std::lock_guard<std::mutex> g(link_->mu);
    link_->host = nullptr;
  }
  if (sendStage_) cudaFreeHost(sendStage_);
  if (recvStage_) cudaFreeHost(recvStage_);
}

Status HostStaging::HostCall(const CollArgs& a, tcclDataType_t dt, const void* send, void* recv, cudaStream_t s) {
  const bool captured = Capturing(s);
  auto* args = new HostCallArgs{link_, a, dt, send, recv, !captured};
  if (captured) {
    std::lock_guard<std::mutex> g(g_capturedMu);
    Captured().emplace_back(args);
  }
  cudaError_t e = cudaLaunchHostFunc(s, RunHostCollective, args);
  if (e != cudaSuccess && !captured) delete args;
  return CudaStatus(e, "cudaLaunchHostFunc (staged collective)");
}

Status HostStaging::Enqueue(const CollArgs& a, tcclDataType_t dt, const void* send, void* recv, cudaStream_t s) {
  const size_t es = a.elemSize, N = (size_t)a.nranks, r = (size_t)a.rank;
  const bool blocks = a.kind == CollKind::AllGather || a.kind == CollKind::ReduceScatter || a.kind == CollKind::AllToAll;
  size_t R = bytes_ / (es * (blocks ? N : 1));
  if (R == 0) return InvalidUsage("TCCL_CUDA_AREA_BYTES is too small for %zu ranks", N);
  const cudaMemcpyKind d2h = cudaMemcpyDeviceToHost, h2d = cudaMemcpyHostToDevice;
  for (size_t off = 0; off < a.count; off += R) {
    const size_t c = std::min(R, a.count - off), b = c * es;
    CollArgs round = a;
    round.count = c;
    round.inPlace = false;
    switch (a.kind) {
      case CollKind::AllReduce:
        TCCL_CUDA_RETURN(cudaMemcpyAsync(sendStage_, At(send, off * es), b, d2h, s), "cudaMemcpyAsync to host");
        round.inPlace = true;
        TCCL_RETURN_IF_ERROR(HostCall(round, dt, sendStage_, sendStage_, s));
        TCCL_CUDA_RETURN(cudaMemcpyAsync(At(recv, off * es), sendStage_, b, h2d, s), "cudaMemcpyAsync to device");
        break;
      case CollKind::Reduce:
        TCCL_CUDA_RETURN(cudaMemcpyAsync(sendStage_, At(send, off * es), b, d2h, s), "cudaMemcpyAsync to host");
        TCCL_RETURN_IF_ERROR(HostCall(round, dt, sendStage_, recvStage_, s));
        if (a.rank == a.root)
          TCCL_CUDA_RETURN(cudaMemcpyAsync(At(recv, off * es), recvStage_, b, h2d, s), "cudaMemcpyAsync to device");
        break;
      case CollKind::Broadcast:
        if (a.rank == a.root)
          TCCL_CUDA_RETURN(cudaMemcpyAsync(sendStage_, At(send, off * es), b, d2h, s), "cudaMemcpyAsync to host");
        round.inPlace = true;
        TCCL_RETURN_IF_ERROR(HostCall(round, dt, sendStage_, sendStage_, s));
        TCCL_CUDA_RETURN(cudaMemcpyAsync(At(recv, off * es), sendStage_, b, h2d, s), "cudaMemcpyAsync to device");
        break;
      case CollKind::AllGather:
        TCCL_CUDA_RETURN(cudaMemcpyAsync(sendStage_, At(send, off * es), b, d2h, s), "cudaMemcpyAsync to host");
        TCCL_RETURN_IF_ERROR(HostCall(round, dt, sendStage_, recvStage_, s));
        TCCL_CUDA_RETURN(cudaMemcpy2DAsync(At(recv, off * es), a.count * es, recvStage_, b, b, N, h2d, s),
                         "cudaMemcpy2DAsync to device");
        break;
      case CollKind::ReduceScatter:
        TCCL_CUDA_RETURN(cudaMemcpy2DAsync(sendStage_, b, At(send, off * es), a.count * es, b, N, d2h, s),
                         "cudaMemcpy2DAsync to host");
        TCCL_RETURN_IF_ERROR(HostCall(round, dt, sendStage_, recvStage_, s));
        TCCL_CUDA_RETURN(cudaMemcpyAsync(At(recv, off * es), recvStage_, b, h2d, s), "cudaMemcpyAsync to device");
        break;
      case CollKind::AllToAll:
        TCCL_CUDA_RETURN(cudaMemcpy2DAsync(sendStage_, b, At(send, off * es), a.count * es, b, N, d2h, s),
                         "cudaMemcpy2DAsync to host");
        TCCL_RETURN_IF_ERROR(HostCall(round, dt, sendStage_, recvStage_, s));
        TCCL_CUDA_RETURN(cudaMemcpy2DAsync(At(recv, off * es), a.count * es, recvStage_, b, b, N, h2d, s),
                         "cudaMemcpy2DAsync to device");
        break;
    }
  }
  (void)r;
  return Status::Ok();
}

}  // namespace tccl
