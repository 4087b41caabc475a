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
  h->slotBytes_ = bytes / 2;  // two slots: one in the network while the other is copied
  h->link_ = std::make_shared<StagingLink>();
  h->link_->host = host;
  for (Slot& slot : h->slots_) {
    TCCL_CUDA_RETURN(cudaHostAlloc(reinterpret_cast<void**>(&slot.send), h->slotBytes_, cudaHostAllocPortable),
                     "cudaHostAlloc of the staging buffer");
    TCCL_CUDA_RETURN(cudaHostAlloc(reinterpret_cast<void**>(&slot.recv), h->slotBytes_, cudaHostAllocPortable),
                     "cudaHostAlloc of the staging buffer");
    for (cudaEvent_t* e : {&slot.copiedIn, &slot.reduced, &slot.copiedOut})
      TCCL_CUDA_RETURN(cudaEventCreateWithFlags(e, cudaEventDisableTiming), "cudaEventCreate");
  }
  TCCL_CUDA_RETURN(cudaEventCreateWithFlags(&h->started_, cudaEventDisableTiming), "cudaEventCreate");
  TCCL_CUDA_RETURN(cudaStreamCreateWithFlags(&h->copyStream_, cudaStreamNonBlocking), "cudaStreamCreate");
  TCCL_CUDA_RETURN(cudaStreamCreateWithFlags(&h->hostStream_, cudaStreamNonBlocking), "cudaStreamCreate");
  *out = std::move(h);
  return Status::Ok();
}

HostStaging::~HostStaging() {
  {
    std::lock_guard<std::mutex> g(link_->mu);
    link_->host = nullptr;
  }
  for (Slot& slot : slots_) {
    if (slot.send) cudaFreeHost(slot.send);
    if (slot.recv) cudaFreeHost(slot.recv);
    for (cudaEvent_t e : {slot.copiedIn, slot.reduced, slot.copiedOut})
      if (e) cudaEventDestroy(e);
  }
  if (started_) cudaEventDestroy(started_);
  if (copyStream_) cudaStreamDestroy(copyStream_);
  if (hostStream_) cudaStreamDestroy(hostStream_);
}

Status HostStaging::HostCall(const CollArgs& a, tcclDataType_t dt, const void* send, void* recv, bool captured) {
  auto* args = new HostCallArgs{link_, a, dt, send, recv, !captured};
  if (captured) {
    std::lock_guard<std::mutex> g(g_capturedMu);
    Captured().emplace_back(args);
  }
  cudaError_t e = cudaLaunchHostFunc(hostStream_, RunHostCollective, args);
  if (e != cudaSuccess && !captured) delete args;
  return CudaStatus(e, "cudaLaunchHostFunc (staged collective)");
}

namespace {

// What a round of each collective copies to the host, computes there, and copies back. Rows: the
// round takes the same element range of every rank's block (pitch = the whole block).
struct Flow {
  bool in, inRows;    // copy this rank's contribution to the host (as N rows?)
  bool hostInPlace;   // the host collective works in the send buffer
  bool out, outRows;  // copy the result back (as N rows?)
};

Flow FlowOf(const CollArgs& a) {
  const bool root = a.rank == a.root;
  switch (a.kind) {
    case CollKind::AllReduce: return {true, false, true, true, false};
    case CollKind::Reduce: return {true, false, false, root, false};
    case CollKind::Broadcast: return {root, false, true, true, false};
    case CollKind::AllGather: return {true, false, false, true, true};
    case CollKind::ReduceScatter: return {true, true, false, true, false};
    case CollKind::AllToAll: return {true, true, false, true, true};
  }
  return {};
}

Status CopyRows(void* dst, size_t dstPitch, const void* src, size_t srcPitch, size_t width, size_t rows,
                cudaMemcpyKind kind, cudaStream_t s) {
  if (width == 0) return Status::Ok();
  if (rows == 1) return CudaStatus(cudaMemcpyAsync(dst, src, width, kind, s), "cudaMemcpyAsync (staging)");
  return CudaStatus(cudaMemcpy2DAsync(dst, dstPitch, src, srcPitch, width, rows, kind, s), "cudaMemcpy2DAsync (staging)");
}

}  // namespace

// Round k uses slot k % 2 and three streams: the copy stream brings its data to the host, the host
// stream runs the host collective, the caller's stream copies the result back. So round k's
// network transfer overlaps round k+1's copy in and round k-1's copy out. A slot is reused only
// after its previous round was copied back (event), and the first round waits for the caller's
// earlier work (which includes every earlier operation's copies back).
Status HostStaging::Enqueue(const CollArgs& a, tcclDataType_t dt, const void* send, void* recv, cudaStream_t s) {
  const size_t es = a.elemSize, N = (size_t)a.nranks;
  const Flow f = FlowOf(a);
  const size_t R = slotBytes_ / (es * (f.inRows || f.outRows ? N : 1));
  if (R == 0) return InvalidUsage("TCCL_CUDA_AREA_BYTES is too small for %zu ranks", N);
  const bool captured = Capturing(s);
  TCCL_CUDA_RETURN(cudaEventRecord(started_, s), "cudaEventRecord");
  TCCL_CUDA_RETURN(cudaStreamWaitEvent(copyStream_, started_, 0), "cudaStreamWaitEvent");
  size_t k = 0;
  for (size_t off = 0; off < a.count; off += R, ++k) {
    Slot& slot = slots_[k % 2];
    const size_t c = std::min(R, a.count - off), b = c * es, pitch = a.count * es;
    if (k >= 2) TCCL_CUDA_RETURN(cudaStreamWaitEvent(copyStream_, slot.copiedOut, 0), "cudaStreamWaitEvent");
    if (f.in)
      TCCL_RETURN_IF_ERROR(CopyRows(slot.send, b, At(send, off * es), pitch, b, f.inRows ? N : 1,
                                    cudaMemcpyDeviceToHost, copyStream_));
    TCCL_CUDA_RETURN(cudaEventRecord(slot.copiedIn, copyStream_), "cudaEventRecord");
    TCCL_CUDA_RETURN(cudaStreamWaitEvent(hostStream_, slot.copiedIn, 0), "cudaStreamWaitEvent");
    CollArgs round = a;
    round.count = c;
    round.inPlace = f.hostInPlace;
    TCCL_RETURN_IF_ERROR(HostCall(round, dt, slot.send, f.hostInPlace ? slot.send : slot.recv, captured));
    TCCL_CUDA_RETURN(cudaEventRecord(slot.reduced, hostStream_), "cudaEventRecord");
    TCCL_CUDA_RETURN(cudaStreamWaitEvent(s, slot.reduced, 0), "cudaStreamWaitEvent");
    if (f.out)
      TCCL_RETURN_IF_ERROR(CopyRows(At(recv, off * es), pitch, f.hostInPlace ? slot.send : slot.recv, b, b,
                                    f.outRows ? N : 1, cudaMemcpyHostToDevice, s));
    TCCL_CUDA_RETURN(cudaEventRecord(slot.copiedOut, s), "cudaEventRecord");
  }
  return Status::Ok();
}

}  // namespace tccl
