// Runs one rank's Schedule over the communicator's connections. Ops of a step progress together;
// ops on the same connection and direction run in order (connections are byte streams). Every wait
// checks the deadline, the abort flag and the peers' health; every message is preceded by an OpTag
// so a peer in a different operation is reported, not silently mixed in.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "algorithms/schedule.h"
#include "core/function_ref.h"
#include "core/status.h"
#include "exec/op_tag.h"
#include "exec/waiter.h"
#include "kernels/host/reduce.h"
#include "transports/transport.h"

namespace tccl {

struct ExecEnv {
  int rank = 0;
  int nranks = 1;
  std::vector<Connection*> conns;  // by peer rank; null for this rank
  Waiter* waiter = nullptr;
  const std::atomic<bool>* aborted = nullptr;
  double timeoutSec = 600;
  std::function<std::string(int)> describePeer;  // "rank 3 (host h, pid 12)"
  OpTag tag;  // sent before every message (bytes filled in per message) and expected on every receive
  // Called while waiting, with the peers of the step's unfinished messages: an error ends the
  // operation (one of them died, or any peer reported a failure).
  std::function<Status(const std::vector<int>& waitingOn)> health;
  // Appended to a timeout message: what is known about the peers (e.g. "rank 2 ... is stopped").
  std::function<std::string()> diagnose;
  int failedPeer = -1;  // out: the peer whose connection failed, when that ended the operation
  // out: whether the operation idled for a peer (Waiter::Idle); Execute only sets it, its caller
  // clears it before each operation.
  bool waited = false;
  // Copies a staging owner's piece into a Schedule::sharedScratch schedule's scratch, whose lines
  // its readers have just read: where set (same-host communicators), the byte ring's copy-in rule,
  // which streams while such stores run clearly slow (transports/shm/ring_copy_in.h). Null: memcpy.
  void (*copyToSharedScratch)(void* ctx, void* dst, const void* src, size_t n) = nullptr;
  void* copyCtx = nullptr;
};

struct ExecKernels {
  size_t elemSize = 1;
  ReduceFn reduce = nullptr;
  DivideFn divide = nullptr;
  // Local copies into their final place (Op::finalDst) go past the cache, with streaming stores:
  // set per plan where the operation's buffers on the host outgrow the last-level cache, as for
  // receives (ShmOperation::streamOutputs).
  bool streamFinalCopies = false;
};
// The kernels for (dtype, op) on this CPU.
ExecKernels KernelsFor(tcclDataType_t dt, tcclRedOp_t op);

// Bytes copied locally into their final place with streaming stores (ExecKernels::streamFinalCopies),
// in this process: for tests.
uint64_t StreamedCopyBytes();
// Bytes a receive-and-reduce handed straight to the send of its result (Op::forwardTo), in this
// process: for tests.
uint64_t ForwardedBytes();

// Fills in Op::prevOnStream and Op::stageAt for every message of `s`, for elements of `elemSize`
// bytes: once per schedule (plans are cached, so a call that repeats pays nothing for it; Execute
// prepares a schedule that is not prepared for its element size on a copy).
void PrepareSchedule(Schedule* s, size_t elemSize);

// bufs[kSendBuf], bufs[kRecvBuf], bufs[kScratchBuf], then p2p user buffers.
// `describe` names the operation for error messages ("all_reduce #12 (4096 x float, ring) on ...");
// it is only called when something fails, so the fast path builds no strings.
Status Execute(const Schedule& s, const std::vector<void*>& bufs, const ExecKernels& k, ExecEnv& env,
               FunctionRef<std::string()> describe);

}  // namespace tccl
