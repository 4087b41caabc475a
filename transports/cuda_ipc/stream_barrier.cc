#include "transports/cuda_ipc/stream_barrier.h"

namespace tccl {

namespace {
CUdeviceptr Dev(const void* p) { return reinterpret_cast<CUdeviceptr>(p); }
}  // namespace

Status StreamBarrier::Arrive(cudaStream_t stream, int index) const {
  if (nranks_ == 1) return Status::Ok();
  const int parity = index & 1;
  // Three submissions, not one batch: a batch captured into a CUDA graph does not keep its
  // operations in order (seen on an H100: the clear ran before the wait, and the rank that arrived
  // last waited for ever); consecutive submissions are ordered in a stream and in a graph.
  thread_local std::vector<CUstreamBatchMemOpParams> signal, wait, clear;
  signal.clear();
  wait.clear();
  clear.clear();
  for (int p = 0; p < nranks_; ++p) {
    if (p == rank_) continue;
    StreamMemOps::Write(&signal, Dev(w_->flag(p, rank_, parity)), 1);
    StreamMemOps::WaitAtLeast(&wait, Dev(w_->flag(rank_, p, parity)), 1);
    StreamMemOps::Write(&clear, Dev(w_->flag(rank_, p, parity)), 0);
  }
  TCCL_RETURN_IF_ERROR(ops_->Submit(stream, signal));
  TCCL_RETURN_IF_ERROR(ops_->Submit(stream, wait));
  return ops_->Submit(stream, clear);
}

void StreamBarrier::ReleaseOnce(cudaStream_t side) const {
  cudaMemcpyAsync(w_->flag(rank_, 0, 0), ones_.data(), sizeof(uint32_t) * ones_.size(), cudaMemcpyHostToDevice, side);
  cudaStreamSynchronize(side);
}

}  // namespace tccl
