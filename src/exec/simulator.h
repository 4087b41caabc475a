// The in-process schedule simulator (SPEC section 9): runs the schedules of all N ranks of one
// collective with symbolic elements and unbounded FIFO mailboxes instead of transports, then checks
// that every output element is exactly what the collective defines — for reductions, every rank's
// contribution exactly once and nothing else, and for algorithms marked canonical, combined in
// exactly the canonical tree of docs/determinism.md (each element's tree is tracked structurally). It also detects deadlock, unmatched message sizes,
// and ops in one step that touch overlapping memory. No threads, no sockets: N = 64 runs in
// milliseconds.
#pragma once

#include <string>
#include <vector>

#include "algorithms/registry.h"

namespace tccl {

struct SimResult {
  bool ok = true;
  std::string error;  // first problem found
  size_t steps = 0;   // longest per-rank schedule
  size_t messages = 0;
};

// `a.rank` is ignored (every rank is simulated); `a.elemSize` is only used for slicing.
// sendsWaitForReceiver: a send completes only when the receiver has taken all of it (single-copy
// messages, transports/shm/single_copy.h), instead of when it is in the mailbox.
// inPlaceRanks: when not empty (one entry per rank), which ranks call in place; `a.inPlace` is
// then ignored. Whether a call is in place is each rank's own business (its pointers, as in NCCL),
// so every algorithm must work for any mix.
// a.bufferedBytes / a.bufferedBelow (CollArgs): where set, each channel holds that much and no more
// (a send completes once what its receiver has not taken of it fits), unless `channelBytes` says
// what channels really hold (to check a schedule told more); otherwise channels are unbounded.
SimResult Simulate(const AlgorithmInfo& alg, CollArgs a, bool sendsWaitForReceiver = false,
                   const std::vector<bool>& inPlaceRanks = {}, size_t channelBytes = 0);

}  // namespace tccl
