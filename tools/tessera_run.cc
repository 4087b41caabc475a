// tessera-run: start N local ranks of a program with the torchrun variables set (SPEC section 7).
//
//   tessera-run -n N [--] prog args...
//
// Every rank gets RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR,
// MASTER_PORT, TORCHELASTIC_RUN_ID, plus TCCL_BOOTSTRAP_PORT and a fresh random
// TCCL_BOOTSTRAP_SECRET. SIGINT/SIGTERM/SIGHUP/SIGQUIT are forwarded to every rank. When a rank
// fails, the others are terminated (SIGTERM, then SIGKILL after a grace period), and tessera-run
// exits with the first failing rank's status (128+signal for a signal).
#include <netinet/in.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <errno.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

std::vector<pid_t> g_children;
volatile sig_atomic_t g_signal = 0;

void OnSignal(int sig) {
  g_signal = sig;
  for (pid_t p : g_children)
    if (p > 0) kill(p, sig);
}

int Usage() {
  fprintf(stderr,
          "usage: tessera-run -n N [--grace SECONDS] [--] program [args...]\n"
          "Starts N local ranks with torchrun-style variables; see docs/launch.md.\n");
  return 2;
}

// A free TCP port on the loopback interface (bound then released; the bootstrap takes it next).
int FreePort() {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  if (s < 0 || bind(s, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
      getsockname(s, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    if (s >= 0) close(s);
    return -1;
  }
  close(s);
  return ntohs(a.sin_port);
}

std::string RandomHex(size_t bytes) {
  std::vector<unsigned char> b(bytes);
  if (getrandom(b.data(), bytes, 0) != (ssize_t)bytes) {
    auto t = std::chrono::high_resolution_clock::now().time_since_epoch().count();
    for (size_t i = 0; i < bytes; ++i) b[i] = (unsigned char)(t >> (i % 8 * 8)) ^ (unsigned char)getpid();
  }
  std::string s;
  char h[3];
  for (unsigned char c : b) {
    snprintf(h, sizeof(h), "%02x", c);
    s += h;
  }
  return s;
}

int ExitCode(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  int n = -1;
  double grace = 3.0;
  int i = 1;
  for (; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") {
      ++i;
      break;
    }
    if ((a == "-n" || a == "--nproc" || a == "-np") && i + 1 < argc) {
      n = atoi(argv[++i]);
    } else if (a == "--grace" && i + 1 < argc) {
      grace = atof(argv[++i]);
    } else if (a == "-h" || a == "--help") {
      Usage();
      return 0;
    } else if (a[0] == '-') {
      fprintf(stderr, "tessera-run: unknown option %s\n", a.c_str());
      return Usage();
    } else {
      break;
    }
  }
  if (n < 1 || i >= argc) return Usage();
  int port = FreePort();
  if (port < 0) {
    perror("tessera-run: cannot find a free port");
    return 1;
  }
  std::string secret = RandomHex(16), runId = "tessera-" + RandomHex(6);

  struct sigaction sa{};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaction(sig, &sa, nullptr);

  g_children.assign(n, -1);
  for (int r = 0; r < n; ++r) {
    pid_t pid = fork();
    if (pid < 0) {
      perror("tessera-run: fork");
      OnSignal(SIGTERM);
      return 1;
    }
    if (pid == 0) {
      setenv("RANK", std::to_string(r).c_str(), 1);
      setenv("LOCAL_RANK", std::to_string(r).c_str(), 1);
      setenv("WORLD_SIZE", std::to_string(n).c_str(), 1);
      setenv("LOCAL_WORLD_SIZE", std::to_string(n).c_str(), 1);
      setenv("GROUP_RANK", "0", 1);
      setenv("MASTER_ADDR", "127.0.0.1", 1);
      setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
      setenv("TORCHELASTIC_RUN_ID", runId.c_str(), 1);
      setenv("TCCL_BOOTSTRAP_PORT", std::to_string(port).c_str(), 1);
      setenv("TCCL_BOOTSTRAP_SECRET", secret.c_str(), 1);
      execvp(argv[i], argv + i);
      fprintf(stderr, "tessera-run: cannot run %s: %s\n", argv[i], strerror(errno));
      _exit(127);
    }
    g_children[r] = pid;
  }

  int firstFailure = 0, alive = n;
  auto killedAt = std::chrono::steady_clock::time_point::max();
  bool killedHard = false;
  while (alive > 0) {
    int status = 0;
    // Block while all is well (a launcher that polls would steal time slices from the ranks it
    // launched); poll only while waiting out the grace period after a failure.
    pid_t pid = waitpid(-1, &status, firstFailure == 0 ? 0 : WNOHANG);
    if (pid < 0 && errno == EINTR) continue;  // a forwarded signal
    if (pid > 0) {
      for (int r = 0; r < n; ++r) {
        if (g_children[r] != pid) continue;
        g_children[r] = -1;
        --alive;
        int code = ExitCode(status);
        if (code != 0 && firstFailure == 0) {
          firstFailure = code;
          fprintf(stderr, "tessera-run: rank %d (pid %d) exited with status %d; stopping the other ranks\n", r, pid, code);
          for (pid_t p : g_children)
            if (p > 0) kill(p, SIGTERM);
          killedAt = std::chrono::steady_clock::now();
        }
      }
      continue;
    }
    if (!killedHard && std::chrono::steady_clock::now() - killedAt > std::chrono::duration<double>(grace)) {
      for (pid_t p : g_children)
        if (p > 0) kill(p, SIGKILL);
      killedHard = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (firstFailure == 0 && g_signal) return 128 + g_signal;
  return firstFailure;
}
