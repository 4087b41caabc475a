// Watches the other processes of this communicator that run on this host, so a rank blocked on a
// peer that was killed or crashed fails within milliseconds instead of at TCCL_TIMEOUT
// (SPEC section 5). Uses pidfds (immune to pid reuse); ranks that are threads of this process and
// peers in another pid namespace are not watched (their pids mean nothing here).
//
// A peer that is stopped (SIGSTOP, a debugger) is alive and may resume, so it is not an error by
// itself; Diagnose() names it when an operation times out.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "core/status.h"

namespace tccl {

class PeerMonitor {
 public:
  // pids[r] is rank r's pid; watch[r] says whether it is a same-host peer in this pid namespace.
  PeerMonitor(const std::vector<int>& pids, const std::vector<bool>& watch);
  ~PeerMonitor();
  PeerMonitor(const PeerMonitor&) = delete;
  PeerMonitor& operator=(const PeerMonitor&) = delete;

  // An error naming the first watched peer whose process has exited (of those in `only`, if
  // given). Cheap enough to call on every idle wait: it polls at most once per kCheckIntervalMs.
  Status Check(const std::function<std::string(int)>& describePeer, bool force = false,
               const std::vector<int>* only = nullptr);
  bool Watches(int rank) const {
    for (auto& w : watched_)
      if (w.rank == rank) return true;
    return false;
  }
  // Sentences about watched peers that are stopped, zombies or gone; "" when all look normal.
  std::string Diagnose(const std::function<std::string(int)>& describePeer) const;

  static constexpr int kCheckIntervalMs = 5;

 private:
  struct Watched {
    int rank;
    int pid;
    int pidfd;  // -1 where pidfd_open is unavailable: then kill(pid, 0) is used
  };
  std::vector<Watched> watched_;
  // Atomic: a CUDA communicator's watchdog checks the peers while a staged host collective may.
  std::atomic<double> lastCheck_{0};
};

// This process's pid namespace, for deciding whether a peer's pid can be watched.
std::string PidNamespace();

}  // namespace tccl
