#include "comm/host_stream.h"

namespace tccl {

HostStream::HostStream() : worker_([this] { Run(); }) {}

HostStream::~HostStream() {
  {
    std::lock_guard<std::mutex> g(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  worker_.join();
}

void HostStream::Enqueue(std::function<Status()> work) {
  {
    std::lock_guard<std::mutex> g(mu_);
    queue_.push_back(std::move(work));
  }
  cv_.notify_all();
}

void HostStream::Run() {
  std::unique_lock<std::mutex> lk(mu_);
  for (;;) {
    cv_.wait(lk, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stop requested and drained
    auto work = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    lk.unlock();
    Status st;
    try {
      st = work();
    } catch (const std::exception& e) {
      st = InternalError("stream operation threw: %s", e.what());
    }
    lk.lock();
    busy_ = false;
    if (!st.ok() && firstError_.ok()) firstError_ = st;
    cv_.notify_all();
  }
}

Status HostStream::Synchronize() {
  std::unique_lock<std::mutex> lk(mu_);
  cv_.wait(lk, [&] { return queue_.empty() && !busy_; });
  Status st = firstError_;
  firstError_ = Status();
  return st;
}

Status HostStream::Query() {
  std::lock_guard<std::mutex> g(mu_);
  if (!firstError_.ok()) return firstError_;
  if (!queue_.empty() || busy_) return Status(tcclInProgress, "work is still pending on the stream");
  return Status::Ok();
}

}  // namespace tccl
