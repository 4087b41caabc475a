// One rank of a fault-injection scenario (tests/fault_injection_test.cc starts several of these
// without a launcher, torchrun-style environment only, and injects faults from outside).
//
//   fault_rank --iters N --count C [--mismatch ITER:KIND] [--recover]
//
// Runs N all-reduces of C floats and checks every result. With --mismatch, rank 1 makes a
// different call at iteration ITER (KIND: count, dtype, op, root, coll). Output lines, one per
// event, for the driver to parse:
//   FAULT_RANK <rank> READY
//   FAULT_RANK <rank> ERROR iter=<i> code=<result> t=<unix seconds> msg=<tcclGetLastError(nullptr)>
//   FAULT_RANK <rank> RECOVERED nranks=<n>        (--recover: survivors built a new communicator)
//   FAULT_RANK <rank> DONE                        (no fault seen, every result correct)
// Exit status: 0 done, 1 error reported, 3 error reported and recovered, 4 wrong result, 2 init failed.
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tccl/tccl.h"

namespace {

double UnixNow() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int g_rank = -1;

void Say(const char* fmt, const char* rest = "") {
  printf("FAULT_RANK %d %s%s\n", g_rank, fmt, rest);
  fflush(stdout);
}

// Survivors agree on a new unique id through a file: the lowest survivor writes it.
bool Recover(int victim, int nranks) {
  const char* path = getenv("FAULT_RECOVER_FILE");
  if (!path) return false;
  std::vector<int> survivors;
  for (int r = 0; r < nranks; ++r)
    if (r != victim) survivors.push_back(r);
  int newRank = -1;
  for (size_t i = 0; i < survivors.size(); ++i)
    if (survivors[i] == g_rank) newRank = (int)i;
  tcclUniqueId id;
  if (newRank == 0) {
    if (tcclGetUniqueId(&id) != tcclSuccess) return false;
    std::string tmp = std::string(path) + ".tmp";
    FILE* f = fopen(tmp.c_str(), "wb");
    if (!f || fwrite(&id, sizeof(id), 1, f) != 1) return false;
    fclose(f);
    rename(tmp.c_str(), path);
  } else {
    for (int tries = 0;; ++tries) {
      FILE* f = fopen(path, "rb");
      if (f) {
        bool ok = fread(&id, sizeof(id), 1, f) == 1;
        fclose(f);
        if (ok) break;
      }
      if (tries > 3000) return false;
      usleep(10000);
    }
  }
  tcclComm_t comm;
  if (tcclCommInitRank(&comm, (int)survivors.size(), id, newRank) != tcclSuccess) return false;
  std::vector<float> buf(1000, 1.0f);
  bool ok = tcclAllReduce(buf.data(), buf.data(), buf.size(), tcclFloat32, tcclSum, comm, nullptr) == tcclSuccess;
  for (float v : buf) ok = ok && v == (float)survivors.size();
  tcclCommDestroy(comm);
  if (ok) printf("FAULT_RANK %d RECOVERED nranks=%zu\n", g_rank, survivors.size());
  fflush(stdout);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  long iters = 1000000, count = 4096, mismatchIter = -1;
  std::string mismatchKind;
  bool recover = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--iters" && i + 1 < argc) iters = atol(argv[++i]);
    else if (a == "--count" && i + 1 < argc) count = atol(argv[++i]);
    else if (a == "--recover") recover = true;
    else if (a == "--mismatch" && i + 1 < argc) {
      std::string m = argv[++i];
      size_t colon = m.find(':');
      mismatchIter = atol(m.substr(0, colon).c_str());
      mismatchKind = colon == std::string::npos ? "count" : m.substr(colon + 1);
    }
  }
  g_rank = atoi(getenv("RANK") ? getenv("RANK") : "-1");
  tcclComm_t comm;
  if (tcclCommInitFromEnv(&comm, nullptr) != tcclSuccess) {
    printf("FAULT_RANK %d INIT_ERROR t=%.6f msg=%s\n", g_rank, UnixNow(), tcclGetLastError(nullptr));
    return 2;
  }
  int nranks = 0;
  tcclCommCount(comm, &nranks);
  Say("READY");
  std::vector<float> send(count + 1), recv(count + 1);
  std::vector<double> dsend(count), drecv(count);
  for (long it = 0; it < iters; ++it) {
    for (long i = 0; i < count; ++i) send[i] = (float)(g_rank + 1 + (i + it) % 7);
    tcclResult_t r;
    bool odd = it == mismatchIter && g_rank == 1;
    if (it == mismatchIter && mismatchKind == "root") {
      r = tcclBroadcast(send.data(), recv.data(), count, tcclFloat32, g_rank == 1 ? 1 : 0, comm, nullptr);
    } else if (odd && mismatchKind == "count") {
      r = tcclAllReduce(send.data(), recv.data(), count + 1, tcclFloat32, tcclSum, comm, nullptr);
    } else if (odd && mismatchKind == "dtype") {
      r = tcclAllReduce(dsend.data(), drecv.data(), count, tcclFloat64, tcclSum, comm, nullptr);
    } else if (odd && mismatchKind == "op") {
      r = tcclAllReduce(send.data(), recv.data(), count, tcclFloat32, tcclMax, comm, nullptr);
    } else if (odd && mismatchKind == "coll") {
      r = tcclAllGather(send.data(), recv.data(), count / nranks, tcclFloat32, comm, nullptr);
    } else {
      r = tcclAllReduce(send.data(), recv.data(), count, tcclFloat32, tcclSum, comm, nullptr);
    }
    if (r != tcclSuccess) {
      char line[8192];
      snprintf(line, sizeof(line), "ERROR iter=%ld code=%d t=%.6f msg=", it, (int)r, UnixNow());
      Say(line, tcclGetLastError(nullptr));
      tcclCommAbort(comm);
      const char* victim = getenv("FAULT_VICTIM");
      if (recover && victim && Recover(atoi(victim), nranks)) return 3;
      return 1;
    }
    if (it == mismatchIter) continue;  // only the mismatch is under test there
    for (long i = 0; i < count; ++i) {
      float want = (float)(nranks * (nranks + 1) / 2 + nranks * ((i + it) % 7));
      if (recv[i] != want) {
        printf("FAULT_RANK %d WRONG iter=%ld index=%ld got=%g want=%g\n", g_rank, it, i, recv[i], want);
        fflush(stdout);
        return 4;
      }
    }
  }
  Say("DONE");
  tcclCommDestroy(comm);
  return 0;
}
