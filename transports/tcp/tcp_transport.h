// TCP transport for ranks on different hosts: one socket per pair of ranks, full duplex,
// non-blocking. Connection setup: the lower rank connects, the higher accepts; each connection opens
// with a hello carrying the communicator id, the connecting rank and the secret from the unique id,
// and connections without them are refused.
#pragma once

#include <map>
#include <memory>
#include <vector>

#include "core/socket.h"
#include "transports/transport.h"

namespace tccl {

struct TcpSetup {
  int me = -1;
  uint64_t commId = 0;
  uint8_t secret[16] = {0};
  int listenFd = -1;
  std::vector<PeerInfo> peers;  // every rank's info, indexed by rank
  std::vector<int> remote;      // the ranks to connect with over TCP
};

Status ConnectTcpPeers(const TcpSetup& setup, const Deadline& deadline,
                       std::map<int, std::unique_ptr<Connection>>* out);

// The hello a connecting rank sends first.
struct TcpHello {
  static constexpr uint32_t kMagic = 0x54435048;  // "TCPH"
  uint32_t magic;
  int32_t rank;
  uint64_t commId;
  uint8_t secret[16];
};

// The rank a received hello authenticates: one of `setup.remote` below `setup.me` with this
// communicator's id and secret, not yet in `connected`; -1 for anything else (fuzzed by
// tests/fuzz/fuzz_tcp_hello.cc).
int AuthenticateTcpHello(const void* bytes, size_t n, const TcpSetup& setup, const std::vector<bool>& connected);

}  // namespace tccl
