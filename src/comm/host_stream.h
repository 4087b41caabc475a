// A host stream: a worker thread that runs enqueued operations in order (SPEC section 3). A
// collective given a host stream is enqueued and the call returns at once; tcclStreamSynchronize
// waits for everything enqueued so far and returns the first error.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "core/status.h"

namespace tccl {

class HostStream {
 public:
  HostStream();
  ~HostStream();  // drains the queue, then stops the worker
  void Enqueue(std::function<Status()> work);
  Status Synchronize();
  // tcclSuccess when idle and no error, tcclInProgress while work remains, else the first error.
  Status Query();

 private:
  void Run();
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<Status()>> queue_;
  bool busy_ = false;
  bool stop_ = false;
  Status firstError_;
  std::thread worker_;
};

}  // namespace tccl
