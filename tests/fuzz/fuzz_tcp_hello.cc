// Fuzz target: authentication of a TCP transport hello.
#include <cstdint>
#include <cstring>

#include "transports/tcp/tcp_transport.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tccl::TcpSetup s;
  s.me = 3;
  s.commId = 0x1122334455667788ull;
  memset(s.secret, 7, 16);
  s.peers.resize(5);
  s.remote = {0, 2, 4};
  std::vector<bool> connected(5, false);
  if (size > 0) connected[data[0] % 5] = true;
  int rank = tccl::AuthenticateTcpHello(data, size, s, connected);
  if (rank != -1 && (rank != 0 && rank != 2)) __builtin_trap();  // only lower remote ranks
  return 0;
}
