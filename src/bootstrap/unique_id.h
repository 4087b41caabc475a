// What a tcclUniqueId carries: where the bootstrap store listens, the secret that authenticates
// every connection to it, and a random communicator id.
#pragma once

#include <cstdint>

#include "core/socket.h"
#include "tccl/tccl.h"

namespace tccl {

struct UniqueIdData {
  static constexpr uint32_t kMagic = 0x54434944;  // "TCID"
  uint32_t magic = kMagic;
  uint32_t version = 1;
  uint32_t ip = 0;  // network order
  uint16_t port = 0;
  uint16_t pad = 0;
  uint8_t secret[16] = {0};
  uint64_t commId = 0;

  SockAddr Addr() const { return SockAddr{ip, port}; }
};
static_assert(sizeof(UniqueIdData) <= TCCL_UNIQUE_ID_BYTES, "unique id too large");

void PackUniqueId(const UniqueIdData& d, tcclUniqueId* id);
Status UnpackUniqueId(const tcclUniqueId& id, UniqueIdData* d);
void RandomBytes(void* buf, size_t n);

}  // namespace tccl
