// The device part of a CUDA communicator (DeviceComm): the IPC window, stream barrier and
// collectives for ranks on one host, host staging for ranks across hosts, and a watchdog thread
// that turns a stuck or failed device operation into an error instead of a hang.
#pragma once

#include <cuda_runtime_api.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

#include "device/cuda_collectives.h"
#include "device/cuda_staged.h"
#include "device/device_comm.h"

namespace tccl {

class CudaComm : public DeviceComm {
 public:
  static Status Create(Communicator* host, int device, std::unique_ptr<DeviceComm>* out);
  ~CudaComm() override;

  int device() const override { return device_; }
  Status Enqueue(const CollArgs& a, tcclDataType_t dt, const void* send, void* recv, void* stream) override;
  void Release() override;
  bool Addressable(const void* p) const override;

 private:
  CudaComm() = default;
  void Watch();
  // Marks enqueued work so the watchdog can time it out (not inside graph capture).
  Status Track(cudaStream_t s, const std::string& what);
  void DrainReleased(double seconds);

  Communicator* host_ = nullptr;
  int device_ = 0;
  bool ipc_ = false;  // every rank on this host: IPC window; otherwise host staging
  const StreamMemOps* memops_ = nullptr;
  std::unique_ptr<IpcWindow> window_;
  std::unique_ptr<StreamBarrier> barrier_;
  IpcGroup group_;
  std::unique_ptr<HostStaging> staged_;
  cudaStream_t side_ = nullptr;  // the watchdog's own stream (releases, event queries)

  struct Pending {
    cudaEvent_t done;
    double enqueuedAt;
    std::string what;
  };
  std::mutex mu_;  // enqueue order and pending_
  std::condition_variable cv_;
  std::deque<Pending> pending_;
  std::vector<cudaEvent_t> spareEvents_;
  uint64_t seq_ = 0;
  double timeoutSec_ = 600;
  std::atomic<bool> released_{false}, stop_{false};
  std::thread watchdog_;
};

}  // namespace tccl
