// The bootstrap rendezvous: a small key-value store served by one thread in the process that made
// the unique id (or rank 0 of a launcher job). Ranks put their addresses in it and wait for each
// other's; a Get blocks until the key exists (or its namespace was abandoned, store_protocol.h).
// The thread exits once every client that took part (set or waited for a record) has gone again
// (after an abandonment, not before TCCL_TIMEOUT has passed: a later rank still learns why).
#pragma once

#include <cstdint>

#include "core/socket.h"

namespace tccl {

// Starts a server thread listening on ip:port (port 0: any free port). Returns the bound address.
// A persistent server never stops on its own (a launcher job may create communicators from the
// environment again and again); starting a persistent server on a port this process already serves
// with the same secret reuses it.
Status StartStoreServer(uint32_t bindIp, uint16_t port, const uint8_t secret[16], SockAddr* bound,
                        bool persistent = false);

}  // namespace tccl
