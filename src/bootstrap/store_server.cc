#include "bootstrap/store_server.h"

#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap/store_protocol.h"
#include "config/params.h"
#include "core/log.h"

namespace tccl {

namespace {

// A client that has not authenticated within this time is dropped, so half-open or hostile
// connections (slow-loris) cannot pin server resources.
constexpr double kHelloDeadlineSec = 10.0;

struct Client {
  int fd = -1;
  bool authed = false;
  bool foreign = false;  // connected from another process
  // It set or waited for a record: a rank taking part. A rank that only abandons a namespace (its
  // `<ns>/failed`, then gone) is not one, so its leaving does not end a server the others have yet
  // to reach.
  bool participant = false;
  double connectedAt = 0;
  std::string in;
  std::string out;
};

class StoreServer {
 public:
  StoreServer(int listenFd, const uint8_t secret[16], bool persistent)
      : listenFd_(listenFd), persistent_(persistent), lingerSec_((double)ParamInt("TIMEOUT")) {
    memcpy(secret_, secret, 16);
  }

  // Clients from other processes still connected; read from any thread.
  size_t ForeignClients() const { return foreignClients_.load(); }
  // Whether a client may still need this server: a Get is waiting for its key, or a request came
  // in recently (a rank between two requests of its final barrier). Read from any thread.
  bool Busy() const { return pendingGets_.load() > 0 || NowSeconds() - lastRequest_.load() < kQuietSec; }
  static constexpr double kQuietSec = 2.0;

  void Run() {
    bool hadClient = false;
    for (;;) {
      std::vector<pollfd> pfds;
      pfds.push_back({listenFd_, POLLIN, 0});
      for (auto& c : clients_)
        pfds.push_back({c->fd, (short)(POLLIN | (c->out.empty() ? 0 : POLLOUT)), 0});
      int rc = poll(pfds.data(), pfds.size(), 1000);
      if (rc < 0 && errno != EINTR) break;
      if (pfds[0].revents & POLLIN) AcceptOne();
      for (size_t i = 1; i < pfds.size(); ++i) {
        Client& c = *clients_[i - 1];
        if (pfds[i].revents & (POLLIN | POLLHUP | POLLERR)) ReadFrom(c);
        if (c.fd >= 0 && (pfds[i].revents & POLLOUT)) Flush(c);
      }
      double now = NowSeconds();
      for (auto& c : clients_)
        if (c->fd >= 0 && !c->authed && now - c->connectedAt > kHelloDeadlineSec) Drop(*c, "no hello");
      size_t authed = 0, foreign = 0, participants = 0;
      std::vector<std::unique_ptr<Client>> alive;
      for (auto& c : clients_) {
        if (c->fd < 0) continue;
        authed += c->authed;
        participants += c->authed && c->participant;
        foreign += c->authed && c->foreign;
        alive.push_back(std::move(c));
      }
      clients_.swap(alive);
      foreignClients_.store(foreign);
      pendingGets_.store(waiters_.size());
      hadClient = hadClient || participants > 0;
      if (hadClient && authed == 0 && !persistent_ && !Lingering(now)) break;
    }
    close(listenFd_);
    for (auto& c : clients_) close(c->fd);
    foreignClients_.store(0);
    TCCL_INFO(kLogBoot, "bootstrap store stopped (%zu keys)", kv_.size());
  }

 private:
  // After an abandonment the ranks that were here leave at once, possibly before a slower rank has
  // even connected; that rank would then find no server and retry until its own TCCL_TIMEOUT
  // ("connection refused"). So the server stays up for TCCL_TIMEOUT after the last abandonment,
  // the longest a rank started with it would keep trying, to give latecomers the reason at once.
  bool Lingering(double now) const { return abandonedAt_ >= 0 && now - abandonedAt_ < lingerSec_; }

  void AcceptOne() {
    int fd = accept4(listenFd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) return;
    auto c = std::make_unique<Client>();
    c->fd = fd;
    c->connectedAt = NowSeconds();
    clients_.push_back(std::move(c));
  }

  void Drop(Client& c, const char* why) {
    TCCL_INFO(kLogBoot, "bootstrap store drops a connection: %s", why);
    // Its pending Gets go too: a later client may be given the same fd number.
    for (auto it = waiters_.begin(); it != waiters_.end();) it = it->second == c.fd ? waiters_.erase(it) : std::next(it);
    close(c.fd);
    c.fd = -1;
  }

  void ReadFrom(Client& c) {
    char buf[65536];
    for (;;) {
      ssize_t n = recv(c.fd, buf, sizeof(buf), 0);
      if (n > 0) {
        c.in.append(buf, (size_t)n);
        // Parse as bytes arrive, so a client is judged by its hello before it can send more.
        Parse(c);
        if (c.fd < 0) return;
        if (c.in.size() > kStoreMaxValue + kStoreMaxKey + 64) return Drop(c, "oversized message");
        continue;
      }
      if (n == 0) return Drop(c, "closed");
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      if (errno == EINTR) continue;
      return Drop(c, "read error");
    }
  }

  void Parse(Client& c) {
    size_t pos = 0;
    if (!c.authed) {
      int32_t pid = 0;
      HelloResult h = ParseStoreHello(c.in, secret_, &pid);
      if (h == HelloResult::Incomplete) return;
      if (h == HelloResult::Invalid) {
        TCCL_WARN(kLogBoot, "bootstrap store refused a connection with a wrong magic or secret");
        return Drop(c, "bad hello");
      }
      c.authed = true;
      c.foreign = pid != (int32_t)getpid();
      c.out.push_back('\1');
      pos = sizeof(StoreHello);
    }
    std::vector<StoreCommand> cmds;
    bool wellFormed = ParseStoreRequests(c.in, &pos, &cmds);
    if (!cmds.empty()) lastRequest_.store(NowSeconds());
    for (StoreCommand& cmd : cmds) {
      if (cmd.op == StoreOp::Set) {
        if (cmd.key == FailedKeyOf(cmd.key)) {
          // The first reason stays: later ones are ranks failing because of it.
          kv_.emplace(cmd.key, std::move(cmd.value));  // does not make c a participant
          abandonedAt_ = NowSeconds();
          AnswerNamespace(cmd.key.substr(0, cmd.key.find('/') + 1));
          continue;
        }
        c.participant = true;
        kv_[cmd.key] = std::move(cmd.value);
      } else {
        c.participant = true;
        waiters_.emplace(cmd.key, c.fd);
      }
      Answer(cmd.key);
    }
    if (!wellFormed) return Drop(c, "malformed request");
    c.in.erase(0, pos);
    Flush(c);
  }

  // `<ns>/failed` for a key of namespace `<ns>` (the text before its first '/').
  static std::string FailedKeyOf(const std::string& key) {
    const size_t slash = key.find('/');
    return slash == std::string::npos ? std::string() : key.substr(0, slash + 1) + kStoreFailedKey;
  }

  // Answers every waiter in the namespace `prefix` (ending in '/') with what Answer finds.
  void AnswerNamespace(const std::string& prefix) {
    // The waiters are sorted by key, so the namespace's keys are one run from lower_bound(prefix);
    // each distinct key once (Answer replies to all of its waiters).
    std::vector<std::string> keys;
    for (auto w = waiters_.lower_bound(prefix);
         w != waiters_.end() && w->first.compare(0, prefix.size(), prefix) == 0; w = waiters_.upper_bound(w->first))
      keys.push_back(w->first);
    for (const std::string& k : keys) Answer(k);
  }

  // Replies to every waiter of `key` if the key exists, or else if its namespace was abandoned.
  void Answer(const std::string& key) {
    auto it = kv_.find(key);
    if (it == kv_.end()) {
      const std::string failed = FailedKeyOf(key);
      it = failed.empty() ? kv_.end() : kv_.find(failed);
    }
    if (it == kv_.end()) return;
    auto range = waiters_.equal_range(key);
    for (auto w = range.first; w != range.second; ++w) {
      for (auto& c : clients_) {
        if (c->fd != w->second) continue;
        uint32_t len = (uint32_t)it->second.size();
        c->out.append(reinterpret_cast<const char*>(&len), 4);
        c->out.append(it->second);
        Flush(*c);
      }
    }
    waiters_.erase(range.first, range.second);
  }

  void Flush(Client& c) {
    while (c.fd >= 0 && !c.out.empty()) {
      ssize_t n = send(c.fd, c.out.data(), c.out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        c.out.erase(0, (size_t)n);
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
      return Drop(c, "write error");
    }
  }

  int listenFd_;
  bool persistent_;
  double lingerSec_;
  double abandonedAt_ = -1;  // NowSeconds() of the last abandonment, -1 before any
  std::atomic<size_t> foreignClients_{0};  // authenticated clients from other processes
  std::atomic<size_t> pendingGets_{0};
  std::atomic<double> lastRequest_{0};
  uint8_t secret_[16];
  std::vector<std::unique_ptr<Client>> clients_;
  std::map<std::string, std::string> kv_;
  std::multimap<std::string, int> waiters_;
};

// Ranks in other processes may still be reading from a store this process serves (rank 0 can
// finish a job before a slower rank has fetched the last bootstrap record). At exit, serve them
// while they are connected and busy (a pending Get, or a request in the last kQuietSec), up to
// TCCL_TIMEOUT, so an early exit of rank 0 never fails the others — and a frozen or idle peer that
// merely keeps its connection open does not hold this process's exit.
std::mutex g_serversMu;
std::vector<std::weak_ptr<StoreServer>> g_servers;

void WaitForForeignClientsAtExit() {
  std::vector<std::shared_ptr<StoreServer>> live;
  {
    std::lock_guard<std::mutex> g(g_serversMu);
    for (auto& w : g_servers)
      if (auto s = w.lock()) live.push_back(s);
  }
  Deadline deadline = Deadline::After((double)ParamInt("TIMEOUT"));
  for (auto& s : live)
    while (s->ForeignClients() > 0 && s->Busy() && !deadline.Expired())
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

}  // namespace

Status StartStoreServer(uint32_t bindIp, uint16_t port, const uint8_t secret[16], SockAddr* bound, bool persistent) {
  static std::mutex mu;
  static std::map<uint16_t, std::string> persistentServers;  // port -> secret
  std::lock_guard<std::mutex> g(mu);
  if (persistent && port != 0) {
    auto it = persistentServers.find(port);
    if (it != persistentServers.end()) {
      if (it->second != std::string(reinterpret_cast<const char*>(secret), 16))
        return InvalidUsage("bootstrap port %u already serves another job in this process", port);
      *bound = SockAddr{bindIp, port};
      return Status::Ok();
    }
  }
  int fd = -1;
  TCCL_RETURN_IF_ERROR(Listen(bindIp, port, &fd, bound));
  SetNonBlocking(fd);
  if (persistent) persistentServers[bound->port] = std::string(reinterpret_cast<const char*>(secret), 16);
  auto server = std::make_shared<StoreServer>(fd, secret, persistent);
  {
    std::lock_guard<std::mutex> g2(g_serversMu);
    if (g_servers.empty()) atexit(&WaitForForeignClientsAtExit);
    g_servers.push_back(server);
  }
  try {
    std::thread([server] { server->Run(); }).detach();
  } catch (const std::exception& e) {
    close(fd);
    return SystemError("cannot start the bootstrap store thread: %s", e.what());
  }
  TCCL_INFO(kLogBoot, "bootstrap store listening on %s", bound->ToString().c_str());
  return Status::Ok();
}

}  // namespace tccl
