#include "bootstrap/launcher_env.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>

#include "bootstrap/store_server.h"
#include "bootstrap/unique_id.h"
#include "config/params.h"
#include "core/log.h"

namespace tccl {

namespace {

const char* Env(const char* n) {
  const char* v = getenv(n);
  return v && *v ? v : nullptr;
}

bool ParseInt(const char* s, int* out) {
  if (!s) return false;
  char* end = nullptr;
  long v = strtol(s, &end, 10);
  if (*end != '\0' || v < 0 || v > (1 << 30)) return false;
  *out = (int)v;
  return true;
}

uint64_t Fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

void DeriveSecret(const std::string& text, uint8_t out[16]) {
  uint64_t a = Fnv1a(text), b = Fnv1a(text + "#tccl");
  memcpy(out, &a, 8);
  memcpy(out + 8, &b, 8);
}

}  // namespace

Status ReadLauncherEnv(LaunchInfo* out) {
  LaunchInfo li;
  struct Source {
    const char *name, *rank, *size, *local, *job;
  } sources[] = {
      {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK", "TORCHELASTIC_RUN_ID"},
      {"Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_MCA_ess_base_jobid"},
      {"Slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_JOB_ID"},
      {"PMI", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "PMI_JOBID"},
  };
  for (const Source& s : sources) {
    if (!Env(s.rank) || !Env(s.size)) continue;
    li.launcher = s.name;
    if (!ParseInt(Env(s.rank), &li.rank) || !ParseInt(Env(s.size), &li.size) || li.size < 1 || li.rank >= li.size)
      return InvalidArgument("%s variables %s=%s and %s=%s are not a valid rank and size", s.name, s.rank,
                             Env(s.rank), s.size, Env(s.size));
    ParseInt(Env(s.local), &li.localRank);
    // The launcher's parent process is shared by all local ranks; it makes a fallback job key.
    li.jobKey = std::string(s.name) + "-" + (Env(s.job) ? Env(s.job) : std::to_string(getppid()));
    break;
  }
  if (li.launcher.empty())
    return InvalidUsage("tcclCommInitFromEnv: no launcher variables found (RANK/WORLD_SIZE, OMPI_COMM_WORLD_*, "
                        "SLURM_PROCID/SLURM_NTASKS or PMI_RANK/PMI_SIZE); start with tessera-run, torchrun, "
                        "mpirun or srun");
  if (const char* a = Env("MASTER_ADDR")) li.masterAddr = a;
  if (const char* p = Env("MASTER_PORT")) {
    if (!ParseInt(p, &li.masterPort) || li.masterPort <= 0 || li.masterPort > 65535)
      return InvalidArgument("MASTER_PORT=%s is not a valid port", p);
    // tccl's store takes MASTER_PORT + 1 unless TCCL_BOOTSTRAP_PORT names one (AgreeOnUniqueId).
    if (li.masterPort == 65535 && ParamInt("BOOTSTRAP_PORT") == 0)
      return InvalidArgument("MASTER_PORT=65535 leaves no port for tccl's store (MASTER_PORT + 1); set TCCL_BOOTSTRAP_PORT");
  }
  for (char& c : li.jobKey)
    if (c == '/' || c == ' ') c = '_';
  *out = li;
  return Status::Ok();
}

Status AgreeOnUniqueId(const LaunchInfo& info, double timeoutSec, tcclUniqueId* id, std::string* rendezvousFile) {
  rendezvousFile->clear();
  if (!info.masterAddr.empty()) {
    int port = (int)ParamInt("BOOTSTRAP_PORT");
    if (port == 0) {
      if (info.masterPort == 0) return InvalidUsage("MASTER_ADDR is set but MASTER_PORT is not");
      port = info.masterPort + 1;
    }
    UniqueIdData d;
    TCCL_RETURN_IF_ERROR(ResolveIpv4(info.masterAddr, &d.ip));
    d.port = (uint16_t)port;
    std::string secret = ParamString("BOOTSTRAP_SECRET");
    if (secret.empty()) {
      secret = info.masterAddr + ":" + std::to_string(port) + ":" + info.jobKey;
      TCCL_INFO(kLogBoot, "no TCCL_BOOTSTRAP_SECRET: deriving the bootstrap secret from the job's address");
    }
    DeriveSecret(secret, d.secret);
    // Every rank of a job calls tcclCommInitFromEnv the same number of times; the call's ordinal
    // gives each resulting communicator its own id (and so its own store keys and segments).
    static std::atomic<uint64_t> generation{0};
    d.commId = Fnv1a(secret + ":comm:" + std::to_string(generation++));
    if (info.rank == 0) {
      SockAddr bound;
      TCCL_RETURN_IF_ERROR(StartStoreServer(htonl(INADDR_ANY), (uint16_t)port, d.secret, &bound, /*persistent=*/true));
    }
    PackUniqueId(d, id);
    return Status::Ok();
  }
  // One host, no MASTER_ADDR: exchange the id through a file only this user can read.
  std::string path = "/tmp/tccl-rdzv-" + std::to_string(getuid()) + "-" + info.jobKey;
  if (info.rank == 0) {
    if (tcclGetUniqueId(id) != tcclSuccess) return SystemError("cannot create a unique id: %s", tcclGetLastError(nullptr));
    std::string tmp = path + ".tmp" + std::to_string(getpid());
    int fd = open(tmp.c_str(), O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || write(fd, id, sizeof(*id)) != (ssize_t)sizeof(*id) || close(fd) != 0 ||
        rename(tmp.c_str(), path.c_str()) != 0)
      return SystemError("cannot write the rendezvous file %s: %s", path.c_str(), strerror(errno));
    *rendezvousFile = path;
    return Status::Ok();
  }
  Deadline deadline = Deadline::After(timeoutSec);
  for (;;) {
    std::ifstream in(path, std::ios::binary);
    if (in && in.read(reinterpret_cast<char*>(id), sizeof(*id)) && in.gcount() == (std::streamsize)sizeof(*id))
      return Status::Ok();
    if (deadline.Expired())
      return Timeout("rank %d waited %.0f s for rank 0's rendezvous file %s; for jobs across hosts set MASTER_ADDR "
                     "and MASTER_PORT",
                     info.rank, timeoutSec, path.c_str());
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace tccl
