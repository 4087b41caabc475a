#include "comm/flight_recorder.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <map>
#include <mutex>
#include <type_traits>
#include <thread>

#include "config/params.h"
#include "core/cycle_clock.h"
#include "core/log.h"

namespace tccl {

FlightRecorder::FlightRecorder(size_t capacity) : ring_(capacity) {}

static_assert(std::is_trivially_copyable<FlightEntry>::value, "copied word by word");

size_t FlightRecorder::Start(const FlightEntry& e, uint64_t seq) {
  if (ring_.empty()) return 0;
  const uint64_t n = recorded_.load(std::memory_order_relaxed);
  const size_t slot = nextSlot_;  // n % capacity, kept without a division per operation
  nextSlot_ = slot + 1 == ring_.size() ? 0 : slot + 1;
  Slot& s = ring_[slot];
  const uint32_t v = s.version.load(std::memory_order_relaxed);
  s.version.store(v + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);  // the odd count before the new words
  // Word by word straight from `e` (no staging copy on the stack: a small call's time is mostly
  // its stores, docs/performance.md), with this call's number in place of e.seq.
  static_assert(sizeof(FlightEntry) == kWords * 8 && offsetof(FlightEntry, seq) == 0, "whole words, seq first");
  const auto* from = reinterpret_cast<const unsigned char*>(&e);
  s.words[0].store(seq, std::memory_order_relaxed);
  // Unrolled: the loop's counter and branch were as many instructions as its stores.
#pragma GCC unroll 16
  for (size_t i = 1; i < kWords; ++i) {
    uint64_t w;
    memcpy(&w, from + 8 * i, 8);
    s.words[i].store(w, std::memory_order_relaxed);
  }
  s.start.store(CycleNow(), std::memory_order_relaxed);
  s.state.store(FlightEntry::State::Running, std::memory_order_relaxed);
  s.version.store(v + 2, std::memory_order_release);
  recorded_.store(n + 1, std::memory_order_release);
  return slot;
}

bool FlightRecorder::Read(const Slot& slot, FlightEntry* e, uint64_t* start) {
  const uint32_t before = slot.version.load(std::memory_order_acquire);
  uint64_t words[kWords];
  for (size_t i = 0; i < kWords; ++i) words[i] = slot.words[i].load(std::memory_order_relaxed);
  *start = slot.start.load(std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_acquire);  // the words before the second count
  if ((before & 1) || slot.version.load(std::memory_order_relaxed) != before) return false;
  memcpy(e, words, sizeof(*e));
  return true;
}

void FlightRecorder::Finish(size_t slot, bool ok, bool timed) {
  if (ring_.empty()) return;
  Slot& s = ring_[slot];
  s.end.store(timed ? CycleNow() : kUntimed, std::memory_order_relaxed);
  s.state.store(ok ? FlightEntry::State::Done : FlightEntry::State::Failed, std::memory_order_release);
}

std::string FlightRecorder::Dump(const std::string& who) const {
  const uint64_t recorded = recorded_.load(std::memory_order_acquire);
  const size_t n = std::min<uint64_t>(recorded, ring_.size());
  std::string out = who + ": flight recorder, last " + std::to_string(n) + " of " + std::to_string(recorded) +
                    " operations (oldest first)\n";
  const uint64_t now = CycleNow();
  for (uint64_t i = recorded - n; i < recorded; ++i) {
    const Slot& slot = ring_[i % ring_.size()];
    FlightEntry e;
    uint64_t start = 0;
    const FlightEntry::State st = slot.state.load(std::memory_order_acquire);
    if (!Read(slot, &e, &start)) {  // the writer wrapped around onto this slot while we read it
      out += "  (an entry overwritten by a newer operation while being read)\n";
      continue;
    }
    const bool running = st == FlightEntry::State::Running;
    char line[512];
    std::string peers;
    for (int p = 0; p < std::min(e.npeers, FlightEntry::kMaxPeers); ++p)
      peers += (p ? "," : "") + std::to_string(e.peers[p]);
    if (e.npeers > FlightEntry::kMaxPeers) peers += ",+" + std::to_string(e.npeers - FlightEntry::kMaxPeers);
    const char* state = running ? "RUNNING" : st == FlightEntry::State::Done ? "done" : "FAILED";
    const uint64_t end = running ? now : slot.end.load(std::memory_order_relaxed);
    char duration[64];
    if (end == kUntimed)
      snprintf(duration, sizeof(duration), "without waiting for a peer");
    else
      snprintf(duration, sizeof(duration), "%s %.1f us", running ? "running for" : "took", CyclesToSeconds(start, end) * 1e6);
    snprintf(line, sizeof(line), "  #%llu %s %zu x %s%s%s algo %s peers [%s] %s, started %.3f s ago, %s\n",
             (unsigned long long)e.seq, e.op, e.count, e.dtype, e.root >= 0 ? " root " : "",
             e.root >= 0 ? std::to_string(e.root).c_str() : "", e.algo, peers.c_str(), state, CyclesToSeconds(start, now),
             duration);
    out += line;
  }
  return out;
}

namespace {

// The signal handler only writes a byte to a pipe; a thread does the dumping (logging is not
// async-signal-safe).
std::mutex g_mu;
std::map<const void*, std::function<void()>>* g_dumpers = nullptr;
int g_pipe[2] = {-1, -1};

void OnSignal(int) {
  char b = 1;
  ssize_t ignored = write(g_pipe[1], &b, 1);
  (void)ignored;
}

void DumpLoop() {
  char b;
  while (read(g_pipe[0], &b, 1) >= 0) {
    std::lock_guard<std::mutex> g(g_mu);
    for (auto& [owner, dump] : *g_dumpers) dump();
  }
}

void InstallOnce() {
  int sig = (int)ParamInt("FLIGHT_RECORDER_SIGNAL");
  if (sig <= 0 || sig >= NSIG) return;
  if (pipe2(g_pipe, O_CLOEXEC) != 0) return;
  try {
    std::thread(DumpLoop).detach();
  } catch (...) {
    return;
  }
  struct sigaction sa {};
  sa.sa_handler = &OnSignal;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  if (sigaction(sig, &sa, nullptr) != 0) {  // SIGKILL and SIGSTOP cannot be caught
    TCCL_WARN(kLogInit, "TCCL_FLIGHT_RECORDER_SIGNAL=%d: no handler can be installed for it (%s); the flight recorder "
              "dumps on errors and tcclCommDumpFlightRecorder only",
              sig, strerror(errno));
    return;
  }
  TCCL_INFO(kLogInit, "flight recorder dumps on signal %d", sig);
}

}  // namespace

void RegisterForSignalDump(const void* owner, std::function<void()> dump) {
  static std::once_flag once;
  std::lock_guard<std::mutex> g(g_mu);
  if (!g_dumpers) g_dumpers = new std::map<const void*, std::function<void()>>();  // lives to exit
  (*g_dumpers)[owner] = std::move(dump);
  std::call_once(once, InstallOnce);
}

void UnregisterForSignalDump(const void* owner) {
  std::lock_guard<std::mutex> g(g_mu);
  if (g_dumpers) g_dumpers->erase(owner);
}

}  // namespace tccl
