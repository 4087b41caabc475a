// Host memory that peer processes can map (issue #3, single copy): tcclMemAlloc hands out
// buffers backed by a memfd, so a local peer can map the same pages and copy straight out of them
// (transports/shm/single_copy.h) instead of through the channel ring.
//
// One process-wide table of live allocations, so the shared-memory transport can ask, for the
// first byte of a large message, whether the message lies in such a buffer and where.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/status.h"

namespace tccl {

// Where a range of a tcclMemAlloc buffer lives: peers map `fd` of process `pid` (segment `id`,
// `bytes` long) and read at `offset`.
struct SharedRange {
  uint64_t id = 0;
  int fd = -1;
  size_t bytes = 0;
  size_t offset = 0;
};

// Allocates `size` bytes (rounded up to whole pages) of shared host memory; *ptr is page-aligned.
Status SharedMemAlloc(size_t size, void** ptr);
// Frees a pointer that SharedMemAlloc returned; any other pointer is an error and frees nothing.
// Peers that mapped the buffer keep their mapping until their communicator goes away.
Status SharedMemFree(void* ptr);
// True when [p, p + bytes) lies within one live allocation; fills *where.
bool FindSharedRange(const void* p, size_t bytes, SharedRange* where);

}  // namespace tccl
