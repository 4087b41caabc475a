// The last N operations of a communicator (sequence number, operation, dtype, count, root,
// algorithm, peers, state, timestamps), kept so that a hang or failure can be explained after the
// fact (SPEC section 5). Dumped to the log when an operation fails, on tcclCommDumpFlightRecorder,
// and, when TCCL_FLIGHT_RECORDER_SIGNAL names a signal, on that signal for every communicator.
//
// Recording costs a short copy and two time-stamp-counter reads per operation (one for a small
// operation that never waited: kFlightTimedFromBytes), and no lock
// (src/core/cycle_clock.h); N is TCCL_FLIGHT_RECORDER_ENTRIES (0 turns it off). One operation runs
// at a time per communicator (the caller holds the operation lock), so the recorder has a single
// writer: Start writes a slot under a per-slot sequence count (odd while it writes) and Dump, which
// may run on any thread at any time, copies a slot and keeps the copy only if the count was even
// and unchanged around it. A lock here cost two locked instructions per operation, a measurable
// part of an 8-byte collective (docs/performance.md).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tccl {

struct FlightEntry {
  enum class State { Running, Done, Failed };
  uint64_t seq = 0;
  const char* op = "";    // "all_reduce", "send/recv", ...
  const char* dtype = "";
  const char* algo = "";
  size_t count = 0;
  int root = -1;
  static constexpr int kMaxPeers = 8;
  int peers[kMaxPeers] = {0};
  int npeers = 0;         // peers beyond kMaxPeers are counted, not listed
  void AddPeer(int p) {   // once per distinct peer
    for (int i = 0; i < npeers && i < kMaxPeers; ++i)
      if (peers[i] == p) return;
    if (npeers < kMaxPeers) peers[npeers] = p;
    ++npeers;
  }
};

// Operations below this size that never waited for a peer finish without a clock read: the second
// time-stamp-counter read was ~5 ns of a ~60 ns 8-byte call on the development VM, and such an
// operation (a few copies, no wait) cannot be what a hang or a slow step is waiting on; from 4 KiB
// an operation takes at least ~0.3 us there, so its duration costs under 2% to record.
constexpr size_t kFlightTimedFromBytes = 4096;

class FlightRecorder {
 public:
  explicit FlightRecorder(size_t capacity);
  // Records a started operation, `e` numbered `seq` (its own seq is ignored); returns its slot for
  // Finish. (The number comes apart so that a cached plan's entry need not be copied per call.)
  size_t Start(const FlightEntry& e, uint64_t seq);
  // `timed`: read the clock for the entry's duration; else it is dumped as done without waiting.
  void Finish(size_t slot, bool ok, bool timed = true);
  // One line per entry, oldest first, each prefixed with `who`.
  std::string Dump(const std::string& who) const;
  size_t capacity() const { return ring_.size(); }

 private:
  // The entry as words, each an atomic, so a Dump racing a Start reads torn values (and discards
  // them) rather than racing on plain memory.
  static constexpr size_t kWords = (sizeof(FlightEntry) + 7) / 8;
  static constexpr uint64_t kUntimed = 0;  // the counter does not read 0 after boot
  struct Slot {
    std::atomic<uint32_t> version{0};  // odd while Start writes the slot
    std::atomic<uint64_t> words[kWords] = {};
    std::atomic<uint64_t> start{0};  // CycleNow() at Start
    std::atomic<uint64_t> end{0};  // CycleNow() at Finish, or kUntimed
    std::atomic<FlightEntry::State> state{FlightEntry::State::Running};
  };
  // A consistent copy of `slot` (false if Start rewrote it meanwhile).
  static bool Read(const Slot& slot, FlightEntry* e, uint64_t* start);
  std::vector<Slot> ring_;
  std::atomic<uint64_t> recorded_{0};  // written by the single writer only
  size_t nextSlot_ = 0;                // the writer's: recorded_ % capacity
};

// Installs the TCCL_FLIGHT_RECORDER_SIGNAL handler once (no-op when the parameter is 0), and keeps
// the list of communicators it dumps. `dump` writes one communicator's record to the log.
void RegisterForSignalDump(const void* owner, std::function<void()> dump);
void UnregisterForSignalDump(const void* owner);

}  // namespace tccl
