// Single-copy messages between ranks of one host (issue #3). A message of at least
// TCCL_SHM_SINGLE_COPY_BYTES starts in the channel's byte ring with a 64-byte header saying how the
// receiver gets the payload:
//   inline  - the payload follows in the ring, as for smaller messages (two copies);
//   pointer - the sender is a thread of the receiver's process: read its buffer directly;
//   mapped  - the payload lies in a tcclMemAlloc buffer: map the sender's memfd (once) and read it;
//   cma     - the payload lies in a buffer registered with tcclCommRegister: process_vm_readv.
// In the last three the receiver copies (or reduces) straight from the sender's memory and then
// bumps the channel's `copied` count; the sender's send completes only when it sees that count,
// so its buffer stays untouched until it has been read. Both ends decide "header or not" from the
// message size, which both know. The simulator checks every algorithm with sends that complete
// only when received (tests/simulator_test.cc), so waiting for the reader cannot deadlock.
//
// What the sender may offer each peer is settled once at setup by a probe (ProbeSingleCopy):
// mapping a peer's memfd needs pidfd_getfd or /proc/<pid>/fd, and CMA needs ptrace access; a
// container may allow neither, and then those messages simply stay inline.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "core/status.h"

namespace tccl {

class Registrations;

enum class CopyMode : uint32_t { Inline = 0, Pointer = 1, Mapped = 2, Cma = 3 };
const char* CopyModeName(CopyMode m);

struct alignas(16) SingleCopyHeader {
  uint32_t mode = 0;      // CopyMode
  int32_t fd = -1;        // mapped: the memfd in the sender's process
  uint64_t segment = 0;   // mapped: allocation id (the receiver's mapping cache key)
  uint64_t segBytes = 0;  // mapped: allocation size
  uint64_t offset = 0;    // mapped: payload offset in the allocation
  uint64_t address = 0;   // pointer, cma: payload address in the sender's process
  unsigned char unused[24] = {};
};
static_assert(sizeof(SingleCopyHeader) == 64, "one cache line");

// How one local peer may read this rank's memory (the peer's probe result), and its process.
struct SingleCopyPeer {
  int pid = 0;
  bool sameProcess = false;
  bool canMap = false;
  bool canCma = false;
};

// This rank's single-copy settings, shared by its shared-memory connections.
struct SingleCopyConfig {
  size_t minBytes = 0;                  // 0: never (every message inline)
  std::vector<SingleCopyPeer> peers;    // by local index
  const Registrations* registered = nullptr;
  // Every local rank can read every other local rank's tcclMemAlloc memory in one copy (mapped, or
  // by pointer within a process). The same on every rank (from the probe's all-gathered results),
  // so ranks may base a choice of algorithm on it: a communicator's shared scratch
  // (Schedule::sharedScratch) is read in one copy.
  bool everyoneMaps = false;
};

// True when every local peer could read [data, data + bytes) of this rank in one copy (what the
// cost model assumes for a call whose buffers all pass this). `registered`: whether a buffer
// registered with tcclCommRegister counts (read by CMA), as ShmOperation::offerRegistered says.
bool SingleCopyCovers(const SingleCopyConfig& cfg, const void* data, size_t bytes, bool registered);

// The sender's choice for a message of `bytes` at `data` to local peer `peer`; `registered`: whether
// a registered buffer may be offered for CMA reads (else such a message goes inline).
SingleCopyHeader DescribeForPeer(const SingleCopyConfig& cfg, int peer, const void* data, size_t bytes,
                                 bool registered);

// Collective over the communicator (two bootstrap all-gathers): every rank offers a probe buffer,
// tries to map and CMA-read each local peer's, and learns which of its own buffers each peer can
// read, and whether every local rank can map every other's (`everyoneMaps`, the same on every rank).
// `localPids[i]`/`localSameProcess[i]`: local rank i's pid and whether it is this process.
Status ProbeSingleCopy(Bootstrap& boot, int meIndex, const std::vector<int>& localRanks,
                       const std::vector<int>& localPids, const std::vector<bool>& localSameProcess,
                       std::vector<SingleCopyPeer>* peers, bool* everyoneMaps);

// The receiving end's mappings of one peer's tcclMemAlloc buffers (read-only), least recently
// used first out beyond kMaxMappings so a peer that allocates and frees in a loop cannot pin
// unbounded memory here.
class PeerMappings {
 public:
  static constexpr size_t kMaxMappings = 64;
  PeerMappings() = default;
  PeerMappings(const PeerMappings&) = delete;
  PeerMappings& operator=(const PeerMappings&) = delete;
  ~PeerMappings();
  // The start of the peer's allocation `h.segment`, mapped now if not already.
  Status Map(int pid, const SingleCopyHeader& h, const unsigned char** base);

 private:
  struct Mapping {
    const unsigned char* base;
    size_t bytes;
    uint64_t lastUse;
  };
  std::map<uint64_t, Mapping> bySegment_;
  uint64_t uses_ = 0;
};

// Messages of at least TCCL_SHM_SINGLE_COPY_BYTES this process has received in each mode since it
// started (all communicators): what tests and `TCCL_DEBUG_SUBSYS=SHM` use to show which path ran.
uint64_t SingleCopyMessages(CopyMode m);
void CountSingleCopyMessage(CopyMode m);

// Reads `bytes` at `address` in process `pid` into `dst` (process_vm_readv, looping over short
// reads).
Status CmaRead(int pid, uint64_t address, void* dst, size_t bytes);

}  // namespace tccl
