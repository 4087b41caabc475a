// The transport seam (SPEC section 9). A transport moves bytes between two ranks over one
// Connection per peer. Connections are ordered, reliable byte streams in each direction; message
// boundaries come from the schedule (both ends know every size), so the wire carries no framing.
//
// All calls are non-blocking: they do as much as they can now and report how far they got. The
// executor (src/exec) drives them and decides how to wait.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"

namespace tccl {

// Where received bytes go. A plain receive gives `direct`; a receive-and-reduce gives a consumer
// that combines each arriving fragment with local data (so shared memory can reduce straight out of
// its ring without an extra copy). Fragments are always whole multiples of `granularity` bytes.
struct RecvSink {
  void* direct = nullptr;
  // Called with (fragment, byte offset within the message, bytes).
  void (*consume)(void* ctx, const void* frag, size_t offset, size_t bytes) = nullptr;
  void* ctx = nullptr;
  size_t granularity = 1;
  // What `direct` or `consume` writes is the data's final place, not read again by the operation
  // (Op::finalDst).
  bool finalDst = false;
  // `consume` storing past the cache, called instead of it where a transport streams final places
  // (shm: ShmOperation::streamOutputs); the transport fences after it. Null: `consume` always.
  void (*consumeStreamed)(void* ctx, const void* frag, size_t offset, size_t bytes) = nullptr;
  // At most this many bytes this call: a consumer that writes what it reduces straight into a
  // send's window (Connection::SendWindow) takes no more than the window holds.
  size_t maxBytes = SIZE_MAX;
};

class Connection {
 public:
  virtual ~Connection() = default;
  // Push up to `bytes` from `data` (the next part of the current outgoing message, which is
  // `total` bytes long and of which `done` are already sent). Returns bytes taken, or an error.
  virtual Status TrySend(const void* data, size_t done, size_t total, size_t* taken) = 0;
  // Deliver up to the rest of the current incoming message (`total` bytes, `done` delivered) to
  // `sink`. Returns bytes delivered.
  virtual Status TryRecv(const RecvSink& sink, size_t done, size_t total, size_t* delivered) = 0;
  // A send written in place by its producer (the executor's forward of what a receive-and-reduce
  // reduces, exec/executor.cc). SendWindow: where the current outgoing message (`total` bytes,
  // `done` sent) continues in this connection's own buffer, and how many bytes of it may be
  // written there now (*bytes); null where this connection does not send that way, or not now.
  // *stream: the window is to be written with streaming stores, fenced before SendWritten (as the
  // connection's own copy-in writes its buffer now). SendWritten: the next `n` bytes, at most what
  // the window offered, are written there: sends them.
  virtual void* SendWindow(size_t done, size_t total, size_t* bytes, bool* stream) {
    (void)done;
    (void)total;
    *bytes = 0;
    *stream = false;
    return nullptr;
  }
  virtual void SendWritten(size_t n) { (void)n; }
  // File descriptor to poll for readiness, or -1 if this connection is woken by the doorbell.
  virtual int PollFd() const { return -1; }
  // Wakes the peer if TrySend/TryRecv moved data since the last call. Data is visible to the peer
  // as soon as TrySend returns; only the wake-up (a shared-memory doorbell ring) waits for this
  // call, so a tag and its payload, or several fragments, cost one. The executor calls it after
  // every pass over its ops, before it waits or returns.
  virtual void Publish() {}
  // A hint after a step that sent on this connection: the next message will likely be like the
  // last one. Shared memory takes ownership of the cache lines it will write next, so that the
  // next send's stores do not wait for the receiver's copies to be invalidated
  // (docs/performance.md, "Claiming the next lines"). Doing nothing is correct.
  virtual void PrepareNextSend() {}
  // Called among a waiting rank's slower checks (not on every poll) for a receive of `total` bytes
  // that has taken nothing yet: an error where the transport can tell that the peer's next message
  // is not that one (a mismatched call). Doing nothing is correct: the tag check or the deadline
  // reports it then.
  virtual Status CheckUnstartedRecv(size_t total) const {
    (void)total;
    return Status::Ok();
  }
  // Makes the peer's next wait on this connection fail at once (e.g. a TCP FIN) after this rank
  // failed or was aborted; thread-safe against a concurrent TrySend/TryRecv. Shared memory is
  // told through the host's failure record instead, so the default does nothing.
  virtual void Shutdown() {}
  virtual const char* Kind() const = 0;
};

// Per-rank facts a transport needs to decide and set up connections.
struct PeerInfo {
  int rank = -1;
  int pid = 0;
  std::string hostId;
  std::string hostName;
  std::string tcpAddr;  // "a.b.c.d:port" where this rank's TCP listener accepts
  std::string pidNs;    // pid namespace: same-host peers' pids are watched only when it matches
};

}  // namespace tccl
