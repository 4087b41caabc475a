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

}  // namespace tccl
