// How many of a host's shared-memory rings an operation writes: what decides whether its ring
// messages may start over at a ring's start (ShmHost::RingRestartFor, transports/shm/shm_channel.h).
#pragma once

#include <cstddef>
#include <vector>

#include "algorithms/registry.h"
#include "comm/communicator.h"

namespace tccl {

// A collective of `alg` with arguments `a`: for each rank of the host (`sameHost`, ascending), its
// schedule generated, the ranks of the host it sends to. Once per plan.
size_t LocalRingsWritten(const AlgorithmInfo& alg, CollArgs a, const std::vector<int>& sameHost);

// A send/recv group of rank `me`: the host's ranks times the ranks of the host `me` sends to, each
// rank taken to send to as many (an all-to-all of groups).
size_t LocalRingsWritten(const std::vector<P2POp>& ops, int me, const std::vector<int>& sameHost);

}  // namespace tccl
