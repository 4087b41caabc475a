#include "transports/tcp/tcp_transport.h"

#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "core/log.h"

namespace tccl {

namespace {

class TcpConnection : public Connection {
 public:
  TcpConnection(int fd, std::string desc) : fd_(fd), desc_(std::move(desc)) {
    // Large socket buffers let a sender run ahead of its receiver by several slices.
    int sz = 4 << 20;
    setsockopt(fd_, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
    setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
  }
  ~TcpConnection() override { close(fd_); }

  Status TrySend(const void* data, size_t done, size_t total, size_t* taken) override {
    *taken = 0;
    ssize_t n = send(fd_, static_cast<const char*>(data) + done, total - done,
                     MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n >= 0) {
      *taken = (size_t)n;
      return Status::Ok();
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return Status::Ok();
    return RemoteError("TCP connection to %s failed while sending: %s", desc_.c_str(), strerror(errno));
  }

  Status TryRecv(const RecvSink& sink, size_t done, size_t total, size_t* delivered) override {
    *delivered = 0;
    if (sink.direct) {
      ssize_t n = recv(fd_, static_cast<char*>(sink.direct) + done, total - done, MSG_DONTWAIT);
      return Received(n, delivered);
    }
    // Reduce path: read into a bounce buffer, hand over whole elements, keep a partial element.
    size_t want = std::min(sizeof(bounce_) - pending_, total - done - pending_);
    ssize_t n = recv(fd_, bounce_ + pending_, want, MSG_DONTWAIT);
    size_t got = 0;
    TCCL_RETURN_IF_ERROR(Received(n, &got));
    size_t have = pending_ + got;
    size_t whole = have - have % sink.granularity;
    if (whole) sink.consume(sink.ctx, bounce_, done, whole);
    pending_ = have - whole;
    if (pending_) memmove(bounce_, bounce_ + whole, pending_);
    *delivered = whole;
    return Status::Ok();
  }

  int PollFd() const override { return fd_; }
  void Shutdown() override { shutdown(fd_, SHUT_RDWR); }
  const char* Kind() const override { return "tcp"; }

 private:
  Status Received(ssize_t n, size_t* got) {
    if (n > 0) {
      *got = (size_t)n;
      return Status::Ok();
    }
    if (n == 0) return RemoteError("TCP connection to %s was closed by the peer (it failed, was aborted or exited; its log "
                         "names the cause)",
                         desc_.c_str());
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return Status::Ok();
    return RemoteError("TCP connection to %s failed while receiving: %s", desc_.c_str(), strerror(errno));
  }

  int fd_;
  std::string desc_;
  size_t pending_ = 0;
  alignas(64) unsigned char bounce_[256 << 10];
};

std::string Describe(const PeerInfo& p) {
  return "rank " + std::to_string(p.rank) + " (host " + p.hostName + ", pid " + std::to_string(p.pid) +
         ", " + p.tcpAddr + ")";
}

}  // namespace

int AuthenticateTcpHello(const void* bytes, size_t n, const TcpSetup& s, const std::vector<bool>& connected) {
  if (n != sizeof(TcpHello)) return -1;
  TcpHello h;
  memcpy(&h, bytes, sizeof(h));
  bool valid = h.magic == TcpHello::kMagic && h.commId == s.commId && memcmp(h.secret, s.secret, 16) == 0 &&
               h.rank >= 0 && h.rank < s.me && (size_t)h.rank < connected.size() && !connected[h.rank] &&
               std::find(s.remote.begin(), s.remote.end(), h.rank) != s.remote.end();
  return valid ? h.rank : -1;
}

Status ConnectTcpPeers(const TcpSetup& s, const Deadline& deadline,
                       std::map<int, std::unique_ptr<Connection>>* out) {
  size_t toAccept = 0;
  // Connect to every higher remote rank: connect() completes through the listen backlog even before
  // the peer calls accept(), so no ordering between ranks is needed.
  for (int peer : s.remote) {
    if (peer < s.me) {
      ++toAccept;
      continue;
    }
    SockAddr addr;
    if (!SockAddr::Parse(s.peers[peer].tcpAddr, &addr))
      return InternalError("bad TCP address '%s' for rank %d", s.peers[peer].tcpAddr.c_str(), peer);
    int fd = -1;
    TCCL_RETURN_IF_ERROR(Connect(addr, deadline, &fd));
    TcpHello h{TcpHello::kMagic, s.me, s.commId, {}};
    memcpy(h.secret, s.secret, 16);
    Status st = SendAll(fd, &h, sizeof(h), deadline);
    if (!st.ok()) {
      close(fd);
      return st;
    }
    (*out)[peer] = std::make_unique<TcpConnection>(fd, Describe(s.peers[peer]));
  }
  // Hellos are read from every pending connection at once, each with its own short deadline, so
  // silent or slow foreign connections (slow-loris) neither block nor delay the real peers.
  struct Pending {
    int fd;
    Deadline until;
    TcpHello hello;
    size_t got;
  };
  std::vector<Pending> pending;
  std::vector<bool> connected(s.peers.size(), false);
  auto drop = [&](size_t i, const char* why) {
    TCCL_WARN(kLogNet, "rank %d refused a TCP connection: %s", s.me, why);
    close(pending[i].fd);
    pending.erase(pending.begin() + (long)i);
  };
  while (toAccept > 0) {
    if (deadline.Expired()) {
      for (auto& p : pending) close(p.fd);
      std::string missing;
      for (int peer : s.remote)
        if (peer < s.me && !connected[peer]) missing += (missing.empty() ? "" : ", ") + Describe(s.peers[peer]);
      return Timeout("rank %d: %zu lower rank(s) never connected over TCP within the deadline: %s", s.me, toAccept,
                     missing.c_str());
    }
    std::vector<pollfd> pfds{{s.listenFd, POLLIN, 0}};
    for (auto& p : pending) pfds.push_back({p.fd, POLLIN, 0});
    poll(pfds.data(), pfds.size(), std::min(100, deadline.MillisLeft()));
    for (size_t i = pending.size(); i-- > 0;) {
      Pending& p = pending[i];
      if (pfds[i + 1].revents) {
        ssize_t n = recv(p.fd, reinterpret_cast<char*>(&p.hello) + p.got, sizeof(TcpHello) - p.got, MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
          drop(i, "closed before its hello");
          continue;
        }
        if (n > 0) p.got += (size_t)n;
      }
      if (p.got == sizeof(TcpHello)) {
        int rank = AuthenticateTcpHello(&p.hello, p.got, s, connected);
        if (rank < 0) {
          drop(i, "not a valid hello for this communicator (wrong secret, id or rank)");
          continue;
        }
        connected[rank] = true;
        (*out)[rank] = std::make_unique<TcpConnection>(p.fd, Describe(s.peers[rank]));
        pending.erase(pending.begin() + (long)i);
        --toAccept;
      } else if (p.until.Expired()) {
        drop(i, "no complete hello within 5 s");
      }
    }
    if (pfds[0].revents & POLLIN) {
      int fd = -1;
      if (Accept(s.listenFd, Deadline::After(0), &fd).ok())
        pending.push_back({fd, Deadline::After(std::min(5.0, deadline.MillisLeft() / 1000.0)), TcpHello{}, 0});
    }
  }
  return Status::Ok();
}

}  // namespace tccl
