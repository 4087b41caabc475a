// Small blocking-with-deadline TCP helpers used by the bootstrap and the TCP transport.
#pragma once

#include <netinet/in.h>

#include <string>

#include "core/deadline.h"
#include "core/status.h"

namespace tccl {

struct SockAddr {
  uint32_t ip = 0;    // network byte order
  uint16_t port = 0;  // host byte order
  std::string ToString() const;
  static bool Parse(const std::string& hostPort, SockAddr* out);  // "a.b.c.d:port"
};

// Resolves a host name or dotted quad to an IPv4 address.
Status ResolveIpv4(const std::string& host, uint32_t* ip);
// Address other hosts should use to reach this one: TCCL_SOCKET_ADDR (an error when it does not
// resolve), else the first up, non-loopback IPv4 interface, else 127.0.0.1.
Status DefaultLocalIp(uint32_t* ip);

Status Listen(uint32_t ip, uint16_t port, int* fd, SockAddr* bound);
// Connects, retrying refused connections until the deadline (the peer may not listen yet).
Status Connect(const SockAddr& to, const Deadline& deadline, int* fd);
Status Accept(int listenFd, const Deadline& deadline, int* fd);
Status SendAll(int fd, const void* buf, size_t len, const Deadline& deadline);
Status RecvAll(int fd, void* buf, size_t len, const Deadline& deadline);
Status SetNonBlocking(int fd);
SockAddr LocalAddrOf(int fd);

}  // namespace tccl
