#include "bootstrap/store_client.h"

#include <unistd.h>

#include <cstring>

#include "bootstrap/store_protocol.h"

namespace tccl {

Status StoreClient::Connect(const SockAddr& addr, const uint8_t secret[16],
                            const Deadline& deadline, std::shared_ptr<StoreClient>* out) {
  std::shared_ptr<StoreClient> c(new StoreClient());
  c->addr_ = addr;
  Status st = tccl::Connect(addr, deadline, &c->fd_);
  if (!st.ok())
    return Status(st.code(), "cannot reach the bootstrap root at " + addr.ToString() + ": " +
                                 st.message() + " (is rank 0 running, and is the id current?)");
  StoreHello h;
  h.magic = StoreHello::kMagic;
  h.pid = (int32_t)getpid();
  memcpy(h.secret, secret, 16);
  TCCL_RETURN_IF_ERROR(SendAll(c->fd_, &h, sizeof(h), deadline));
  char ack = 0;
  st = RecvAll(c->fd_, &ack, 1, deadline);
  if (!st.ok() || ack != 1)
    return RemoteError("the bootstrap root at %s refused this rank: wrong secret in the unique id, "
                       "or not a tccl bootstrap",
                       addr.ToString().c_str());
  c->localIp_ = LocalAddrOf(c->fd_).ip;
  *out = std::move(c);
  return Status::Ok();
}

Status StoreClient::OutOfStep() const {
  return RemoteError("the bootstrap connection to %s is unusable after an earlier failed request",
                     addr_.ToString().c_str());
}

StoreClient::~StoreClient() {
  if (fd_ >= 0) close(fd_);
}

Status StoreClient::Set(const std::string& key, const std::string& value, const Deadline& deadline) {
  StoreRequest r{(uint32_t)StoreOp::Set, (uint32_t)key.size(), (uint32_t)value.size()};
  std::string msg(reinterpret_cast<const char*>(&r), sizeof(r));
  msg += key;
  msg += value;
  std::lock_guard<std::mutex> g(mu_);
  if (outOfStep_) return OutOfStep();
  return SendAll(fd_, msg.data(), msg.size(), deadline);
}

Status StoreClient::Get(const std::string& key, const Deadline& deadline, std::string* value) {
  StoreRequest r{(uint32_t)StoreOp::Get, (uint32_t)key.size(), 0};
  std::string msg(reinterpret_cast<const char*>(&r), sizeof(r));
  msg += key;
  std::lock_guard<std::mutex> g(mu_);
  if (outOfStep_) return OutOfStep();
  TCCL_RETURN_IF_ERROR(SendAll(fd_, msg.data(), msg.size(), deadline));
  uint32_t len = 0;
  Status st = RecvAll(fd_, &len, 4, deadline);
  if (!st.ok()) outOfStep_ = true;
  if (st.code() == tcclTimeout)
    return Timeout("timed out waiting for bootstrap key '%s' from %s: some rank has not arrived",
                   key.c_str(), addr_.ToString().c_str());
  TCCL_RETURN_IF_ERROR(st);
  if (len > kStoreMaxValue) return RemoteError("bootstrap root sent an oversized value");
  value->resize(len);
  st = RecvAll(fd_, value->data(), len, deadline);
  if (!st.ok()) outOfStep_ = true;
  return st;
}

}  // namespace tccl
