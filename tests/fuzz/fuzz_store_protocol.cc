// Fuzz target: the bootstrap store server's parsers (hello, then any stream of requests).
#include <cstdint>
#include <string>
#include <vector>

#include "bootstrap/store_protocol.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const uint8_t secret[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  std::string in(reinterpret_cast<const char*>(data), size);
  int32_t pid = 0;
  size_t pos = 0;
  // Fuzz both an unauthenticated stream and one whose hello the server accepted.
  if (tccl::ParseStoreHello(in, secret, &pid) == tccl::HelloResult::Valid) pos = sizeof(tccl::StoreHello);
  std::vector<tccl::StoreCommand> cmds;
  tccl::ParseStoreRequests(in, &pos, &cmds);
  if (pos > in.size()) __builtin_trap();
  for (auto& c : cmds)
    if (c.key.empty() || c.key.size() > tccl::kStoreMaxKey) __builtin_trap();
  return 0;
}
