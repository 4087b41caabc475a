#include "transports/cuda_ipc/ipc_window.h"

#include <cstring>
#include <string>

namespace tccl {

namespace {

// What a rank publishes: its IPC handle and the pointer (for ranks in the same process).
struct WindowRecord {
  cudaIpcMemHandle_t handle;
  uint64_t pointer;
};

}  // namespace

Status IpcWindow::Create(Bootstrap& boot, int rank, int nranks, const std::vector<bool>& samePeerProcess,
                         size_t areaBytes, std::unique_ptr<IpcWindow>* out) {
  if (nranks > kMaxRanks)
    return InvalidUsage("a CUDA communicator spans at most %d ranks on one host, got %d", kMaxRanks, nranks);
  std::unique_ptr<IpcWindow> w(new IpcWindow());
  w->rank_ = rank;
  w->areaBytes_ = areaBytes;
  w->bases_.assign(nranks, nullptr);
  w->opened_.assign(nranks, false);
  const size_t total = kFlagBytes + 2 * areaBytes;
  void* mine = nullptr;
  cudaError_t e = cudaMalloc(&mine, total);
  if (e != cudaSuccess)
    return DeviceError("cudaMalloc of the %zu-byte IPC window failed: %s (lower TCCL_CUDA_AREA_BYTES)", total,
                       cudaGetErrorString(e));
  w->bases_[rank] = static_cast<char*>(mine);
  // Flags start at zero (the data areas are always written before they are read).
  if ((e = cudaMemset(mine, 0, kFlagBytes)) != cudaSuccess || (e = cudaDeviceSynchronize()) != cudaSuccess)
    return DeviceError("clearing the IPC window failed: %s", cudaGetErrorString(e));
  WindowRecord rec;
  memset(&rec, 0, sizeof(rec));
  rec.pointer = reinterpret_cast<uint64_t>(mine);
  if ((e = cudaIpcGetMemHandle(&rec.handle, mine)) != cudaSuccess)
    return DeviceError("cudaIpcGetMemHandle failed: %s", cudaGetErrorString(e));
  std::vector<std::string> all;
  TCCL_RETURN_IF_ERROR(boot.AllGather(std::string(reinterpret_cast<const char*>(&rec), sizeof(rec)), &all));
  for (int r = 0; r < nranks; ++r) {
    if (r == rank) continue;
    if (all[r].size() != sizeof(WindowRecord)) return InternalError("malformed IPC window record from rank %d", r);
    WindowRecord peer;
    memcpy(&peer, all[r].data(), sizeof(peer));
    if (samePeerProcess[r]) {
      w->bases_[r] = reinterpret_cast<char*>(peer.pointer);
      continue;
    }
    void* p = nullptr;
    e = cudaIpcOpenMemHandle(&p, peer.handle, cudaIpcMemLazyEnablePeerAccess);
    if (e != cudaSuccess)
      return DeviceError("cudaIpcOpenMemHandle of rank %d's window failed: %s (CUDA IPC needs the ranks of a host "
                         "to see the same GPUs and share an IPC namespace)",
                         r, cudaGetErrorString(e));
    w->bases_[r] = static_cast<char*>(p);
    w->opened_[r] = true;
  }
  // Peers' memory may be freed only after every rank has mapped it (cudaIpcOpenMemHandle needs
  // the exporter alive); the caller's setup ends with a bootstrap barrier.
  TCCL_RETURN_IF_ERROR(boot.Barrier());
  *out = std::move(w);
  return Status::Ok();
}

IpcWindow::~IpcWindow() {
  for (size_t r = 0; r < bases_.size(); ++r) {
    if (!bases_[r]) continue;
    if (opened_[r]) cudaIpcCloseMemHandle(bases_[r]);
    else if ((int)r == rank_) cudaFree(bases_[r]);
  }
}

}  // namespace tccl
