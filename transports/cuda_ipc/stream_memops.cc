#include "transports/cuda_ipc/stream_memops.h"

#include <cstring>
#include <mutex>

namespace tccl {

Status StreamMemOps::Get(const StreamMemOps** out) {
  static StreamMemOps ops;
  static Status loaded = [] {
    cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    void* fn = nullptr;
    cudaError_t e = cudaGetDriverEntryPointByVersion("cuStreamBatchMemOp", &fn, 12000, cudaEnableDefault, &q);
    if (e != cudaSuccess || q != cudaDriverEntryPointSuccess || !fn)
      return DeviceError("the CUDA driver does not provide cuStreamBatchMemOp (stream memory operations, CUDA 12 "
                         "or later): %s", cudaGetErrorString(e));
    ops.batch_ = reinterpret_cast<BatchFn>(fn);
    return Status::Ok();
  }();
  *out = &ops;
  return loaded;
}

void StreamMemOps::Write(std::vector<CUstreamBatchMemOpParams>* batch, CUdeviceptr addr, uint32_t value) {
  CUstreamBatchMemOpParams p;
  memset(&p, 0, sizeof(p));
  p.writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
  p.writeValue.address = addr;
  p.writeValue.value = value;
  p.writeValue.flags = CU_STREAM_WRITE_VALUE_DEFAULT;  // ordered after the stream's earlier writes
  batch->push_back(p);
}

void StreamMemOps::WaitAtLeast(std::vector<CUstreamBatchMemOpParams>* batch, CUdeviceptr addr, uint32_t value) {
  CUstreamBatchMemOpParams p;
  memset(&p, 0, sizeof(p));
  p.waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_32;
  p.waitValue.address = addr;
  p.waitValue.value = value;
  p.waitValue.flags = CU_STREAM_WAIT_VALUE_GEQ;
  batch->push_back(p);
}

Status StreamMemOps::Submit(cudaStream_t stream, std::vector<CUstreamBatchMemOpParams>& batch) const {
  if (batch.empty()) return Status::Ok();
  CUresult r = batch_(reinterpret_cast<CUstream>(stream), (unsigned)batch.size(), batch.data(), 0);
  if (r != CUDA_SUCCESS)
    return DeviceError("cuStreamBatchMemOp (%zu stream memory operations) failed with CUDA driver error %d",
                       batch.size(), (int)r);
  return Status::Ok();
}

}  // namespace tccl
