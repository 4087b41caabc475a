#include "comm/peer_monitor.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "core/deadline.h"

namespace tccl {

namespace {

int PidfdOpen(int pid) {
#ifdef SYS_pidfd_open
  return (int)syscall(SYS_pidfd_open, pid, 0);
#else
  (void)pid;
  errno = ENOSYS;
  return -1;
#endif
}

// The state letter of /proc/<pid>/stat ('R', 'S', 'T', 'Z', ...), or 0 if unreadable.
char ProcState(int pid) {
  char path[64];
  snprintf(path, sizeof(path), "/proc/%d/stat", pid);
  FILE* f = fopen(path, "r");
  if (!f) return 0;
  char buf[512];
  size_t n = fread(buf, 1, sizeof(buf) - 1, f);
  fclose(f);
  buf[n] = 0;
  // "pid (comm) S ...": comm may contain spaces and parentheses, so search from the last ')'.
  char* close = strrchr(buf, ')');
  return close && close[1] == ' ' ? close[2] : 0;
}

}  // namespace

std::string PidNamespace() {
  char buf[128];
  ssize_t n = readlink("/proc/self/ns/pid", buf, sizeof(buf) - 1);
  return n > 0 ? std::string(buf, (size_t)n) : std::string();
}

PeerMonitor::PeerMonitor(const std::vector<int>& pids, const std::vector<bool>& watch) {
  for (size_t r = 0; r < pids.size(); ++r)
    if (watch[r] && pids[r] > 0 && pids[r] != getpid())
      watched_.push_back({(int)r, pids[r], PidfdOpen(pids[r])});
}

PeerMonitor::~PeerMonitor() {
  for (auto& w : watched_)
    if (w.pidfd >= 0) close(w.pidfd);
}

Status PeerMonitor::Check(const std::function<std::string(int)>& describePeer, bool force,
                          const std::vector<int>* only) {
  if (watched_.empty()) return Status::Ok();
  double now = NowSeconds();
  if (!force && (now - lastCheck_.load(std::memory_order_relaxed)) * 1000 < kCheckIntervalMs) return Status::Ok();
  lastCheck_.store(now, std::memory_order_relaxed);
  for (auto& w : watched_) {
    if (only && std::find(only->begin(), only->end(), w.rank) == only->end()) continue;
    bool exited;
    if (w.pidfd >= 0) {
      // A pidfd becomes readable when the process exits (even before its parent reaps it).
      pollfd p{w.pidfd, POLLIN, 0};
      exited = poll(&p, 1, 0) > 0;
    } else {
      exited = (kill(w.pid, 0) != 0 && errno == ESRCH) || ProcState(w.pid) == 'Z';
    }
    if (exited)
      return RemoteError("%s exited (killed or crashed) while this rank was waiting for it",
                         describePeer(w.rank).c_str());
  }
  return Status::Ok();
}

std::string PeerMonitor::Diagnose(const std::function<std::string(int)>& describePeer) const {
  std::string out;
  for (auto& w : watched_) {
    const char* what = nullptr;
    switch (ProcState(w.pid)) {
      case 'T': what = "is stopped (SIGSTOP or job control)"; break;
      case 't': what = "is stopped by a debugger"; break;
      case 'Z': case 'X': case 0: what = "has exited"; break;
      case 'D': what = "is in uninterruptible sleep (I/O or paging)"; break;
      default: break;
    }
    if (what) out += (out.empty() ? "" : "; ") + describePeer(w.rank) + " " + what;
  }
  return out;
}

}  // namespace tccl
