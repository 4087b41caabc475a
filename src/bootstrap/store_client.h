// A connection to the bootstrap store. Thread-safe: communicators split from one parent share it.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "core/socket.h"

namespace tccl {

class StoreClient {
 public:
  static Status Connect(const SockAddr& addr, const uint8_t secret[16], const Deadline& deadline,
                        std::shared_ptr<StoreClient>* out);
  ~StoreClient();

  Status Set(const std::string& key, const std::string& value, const Deadline& deadline);
  // Blocks until the key exists or the deadline passes.
  Status Get(const std::string& key, const Deadline& deadline, std::string* value);
  // The local address of the connection: an address of this host that reaches the root.
  uint32_t LocalIp() const { return localIp_; }
  std::string Describe() const { return addr_.ToString(); }

 private:
  StoreClient() = default;
  Status OutOfStep() const;
  int fd_ = -1;
  uint32_t localIp_ = 0;
  SockAddr addr_;
  std::mutex mu_;
  // A Get that timed out leaves its answer in flight; later replies would be misread, so the
  // connection refuses further use.
  bool outOfStep_ = false;
};

}  // namespace tccl
