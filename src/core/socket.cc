#include "core/socket.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <thread>

#include "config/params.h"

namespace tccl {

std::string SockAddr::ToString() const {
  char buf[INET_ADDRSTRLEN] = {0};
  in_addr a;
  a.s_addr = ip;
  inet_ntop(AF_INET, &a, buf, sizeof(buf));
  return std::string(buf) + ":" + std::to_string(port);
}

bool SockAddr::Parse(const std::string& hostPort, SockAddr* out) {
  size_t colon = hostPort.rfind(':');
  if (colon == std::string::npos) return false;
  in_addr a;
  if (inet_pton(AF_INET, hostPort.substr(0, colon).c_str(), &a) != 1) return false;
  char* end = nullptr;
  long p = strtol(hostPort.c_str() + colon + 1, &end, 10);
  if (*end != '\0' || p <= 0 || p > 65535) return false;
  out->ip = a.s_addr;
  out->port = (uint16_t)p;
  return true;
}

Status ResolveIpv4(const std::string& host, uint32_t* ip) {
  in_addr a;
  if (inet_pton(AF_INET, host.c_str(), &a) == 1) {
    *ip = a.s_addr;
    return Status::Ok();
  }
  addrinfo hints{}, *res = nullptr;
  hints.ai_family = AF_INET;
  int rc = getaddrinfo(host.c_str(), nullptr, &hints, &res);
  if (rc != 0 || !res)
    return SystemError("cannot resolve host '%s': %s", host.c_str(), gai_strerror(rc));
  *ip = reinterpret_cast<sockaddr_in*>(res->ai_addr)->sin_addr.s_addr;
  freeaddrinfo(res);
  return Status::Ok();
}

Status DefaultLocalIp(uint32_t* out) {
  const std::string forced = ParamString("SOCKET_ADDR");
  if (!forced.empty()) {
    Status st = ResolveIpv4(forced, out);
    if (!st.ok()) return InvalidArgument("TCCL_SOCKET_ADDR='%s': %s", forced.c_str(), st.message().c_str());
    return Status::Ok();
  }
  uint32_t ip = 0;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) == 0) {
    for (ifaddrs* i = list; i; i = i->ifa_next) {
      if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET) continue;
      if ((i->ifa_flags & IFF_LOOPBACK) || !(i->ifa_flags & IFF_UP)) continue;
      ip = reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr.s_addr;
      break;
    }
    freeifaddrs(list);
  }
  *out = ip ? ip : htonl(INADDR_LOOPBACK);
  return Status::Ok();
}

static void SetCommonOptions(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  fcntl(fd, F_SETFD, FD_CLOEXEC);
}

Status Listen(uint32_t ip, uint16_t port, int* fd, SockAddr* bound) {
  int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) return SystemError("socket(): %s", strerror(errno));
  int one = 1;
  setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = ip;
  a.sin_port = htons(port);
  if (bind(s, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    int e = errno;
    close(s);
    SockAddr want{ip, port};
    return SystemError("cannot listen on %s: %s", want.ToString().c_str(), strerror(e));
  }
  if (listen(s, 1024) != 0) {
    int e = errno;
    close(s);
    return SystemError("listen(): %s", strerror(e));
  }
  *fd = s;
  *bound = LocalAddrOf(s);
  if (bound->ip == 0) bound->ip = ip;
  return Status::Ok();
}

SockAddr LocalAddrOf(int fd) {
  sockaddr_in a{};
  socklen_t len = sizeof(a);
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  return SockAddr{a.sin_addr.s_addr, ntohs(a.sin_port)};
}

Status SetNonBlocking(int fd) {
  int fl = fcntl(fd, F_GETFL);
  if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
    return SystemError("fcntl(O_NONBLOCK): %s", strerror(errno));
  return Status::Ok();
}

static Status WaitFd(int fd, short events, const Deadline& deadline, const char* what) {
  for (;;) {
    pollfd p{fd, events, 0};
    int rc = poll(&p, 1, deadline.MillisLeft(100));
    if (rc > 0) return Status::Ok();
    if (rc < 0 && errno != EINTR) return SystemError("poll() while %s: %s", what, strerror(errno));
    if (deadline.Expired()) return Timeout("timed out while %s", what);
  }
}

Status Connect(const SockAddr& to, const Deadline& deadline, int* fd) {
  int backoffMs = 1;
  for (;;) {
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0) return SystemError("socket(): %s", strerror(errno));
    SetCommonOptions(s);
    SetNonBlocking(s);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = to.ip;
    a.sin_port = htons(to.port);
    int rc = connect(s, reinterpret_cast<sockaddr*>(&a), sizeof(a));
    int err = rc == 0 ? 0 : errno;
    if (err == EINPROGRESS) {
      Status st = WaitFd(s, POLLOUT, deadline, ("connecting to " + to.ToString()).c_str());
      if (!st.ok()) {
        close(s);
        return st;
      }
      socklen_t len = sizeof(err);
      getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &len);
    }
    if (err == 0) {
      *fd = s;
      return Status::Ok();
    }
    close(s);
    if (err != ECONNREFUSED && err != ECONNRESET && err != ETIMEDOUT && err != EHOSTUNREACH &&
        err != ENETUNREACH)
      return SystemError("connect to %s: %s", to.ToString().c_str(), strerror(err));
    if (deadline.Expired())
      return Timeout("could not connect to %s before the deadline (%s)", to.ToString().c_str(),
                     strerror(err));
    std::this_thread::sleep_for(std::chrono::milliseconds(backoffMs));
    backoffMs = backoffMs < 100 ? backoffMs * 2 : 100;
  }
}

Status Accept(int listenFd, const Deadline& deadline, int* fd) {
  TCCL_RETURN_IF_ERROR(WaitFd(listenFd, POLLIN, deadline, "waiting for peers to connect"));
  int s = accept4(listenFd, nullptr, nullptr, SOCK_CLOEXEC);
  if (s < 0) return SystemError("accept(): %s", strerror(errno));
  SetCommonOptions(s);
  SetNonBlocking(s);
  *fd = s;
  return Status::Ok();
}

Status SendAll(int fd, const void* buf, size_t len, const Deadline& deadline) {
  const char* p = static_cast<const char*>(buf);
  while (len > 0) {
    ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
    if (n > 0) {
      p += n;
      len -= (size_t)n;
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      TCCL_RETURN_IF_ERROR(WaitFd(fd, POLLOUT, deadline, "sending"));
      continue;
    }
    return RemoteError("connection lost while sending: %s", strerror(errno));
  }
  return Status::Ok();
}

Status RecvAll(int fd, void* buf, size_t len, const Deadline& deadline) {
  char* p = static_cast<char*>(buf);
  while (len > 0) {
    ssize_t n = recv(fd, p, len, 0);
    if (n > 0) {
      p += n;
      len -= (size_t)n;
      continue;
    }
    if (n == 0) return RemoteError("connection closed by peer");
    if (errno == EAGAIN || errno == EINTR) {
      TCCL_RETURN_IF_ERROR(WaitFd(fd, POLLIN, deadline, "receiving"));
      continue;
    }
    return RemoteError("connection lost while receiving: %s", strerror(errno));
  }
  return Status::Ok();
}

}  // namespace tccl
