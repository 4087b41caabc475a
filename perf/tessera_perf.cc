// tessera-perf: nccl-tests-compatible benchmark for tccl (SPEC section 8). One process is one rank;
// start N of them with `tessera-run -n N` or `mpirun -np N`. Rank 0 prints the nccl-tests table
// plus a #det column: elements whose bits differ from tcclReduceReference on order-sensitive
// inputs.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "kernels/host/dtype.h"
#include "perf/perf_args.h"
#include "perf/perf_colls.h"
#include "perf/perf_data.h"
#include "perf/perf_device.h"
#include "tccl/tccl.h"

using namespace perf;

namespace {

struct Job {
  tcclComm_t comm = nullptr;      // host memory: barriers, timing aggregates, result counts
  tcclComm_t measured = nullptr;  // the communicator measured: comm, or a CUDA split of it (-D)
  DeviceBuffers* dev = nullptr;   // -D: device copies of the buffers
  int rank = 0, nranks = 1;
  FILE* json = nullptr;
  CheckMemo checks;  // the in-place check of a size reuses the out-of-place one's where the bytes agree
};

#define CHECK_TCCL(call)                                                                         \
  do {                                                                                           \
    tcclResult_t _r = (call);                                                                    \
    if (_r != tcclSuccess) {                                                                     \
      fprintf(stderr, "tessera-perf rank %d: %s failed: %s: %s\n", job.rank, #call,              \
              tcclGetErrorString(_r), tcclGetLastError(job.comm));                               \
      exit(1);                                                                                   \
    }                                                                                            \
  } while (0)

double Now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

void Barrier(Job& job) {
  int x = 0;
  CHECK_TCCL(tcclAllReduce(&x, &x, 1, tcclInt32, tcclSum, job.comm, nullptr));
}

// Combines one per-rank number as -a asks: 0 rank 0's, 1 mean, 2 min, 3 max.
double Aggregate(Job& job, double v, int how) {
  tcclRedOp_t op = how == 2 ? tcclMin : how == 3 ? tcclMax : tcclSum;
  if (how == 0) {
    CHECK_TCCL(tcclBroadcast(&v, &v, 1, tcclFloat64, 0, job.comm, nullptr));
    return v;
  }
  CHECK_TCCL(tcclAllReduce(&v, &v, 1, tcclFloat64, op, job.comm, nullptr));
  return how == 1 ? v / job.nranks : v;
}

int64_t SumAll(Job& job, int64_t v) {
  CHECK_TCCL(tcclAllReduce(&v, &v, 1, tcclInt64, tcclSum, job.comm, nullptr));
  return v;
}

struct Result {
  double timeUs = 0, algbw = 0, busbw = 0;
  int64_t wrong = -1, det = -1;  // -1: not checked
};

// Lays out this rank's input for one call: out of place in `send`, in place inside `recv`.
void PrepareInput(const Coll& c, const Shape& s, tcclDataType_t dt, tcclRedOp_t op, int root, Job& job, bool inPlace,
                  void* sendBase, void* recvBase, void** send, void** recv, uint64_t seed) {
  size_t es = tccl::DtypeSize(dt);
  if (!inPlace) {
    *send = sendBase;
    *recv = recvBase;
    memset(recvBase, 0, s.recvElems * es);
  } else {
    memset(recvBase, 0, std::max(s.sendElems, s.recvElems) * es);
    InPlacePointers(c, recvBase, es, job.rank, s, send, recv);
  }
  bool sends = !(c.rooted && std::string(c.name) == "broadcast" && job.rank != root);
  if (sends) FillInput(*send, s.sendElems, 0, dt, op, job.rank, seed);
}

Result Measure(const Coll& c, const Args& args, Job& job, size_t bytes, tcclDataType_t dt, tcclRedOp_t op, int root,
               bool inPlace, void* sendBase, void* recvBase, size_t es) {
  Result r;
  Shape s = c.shape(bytes, es, job.nranks);
  uint64_t seed = bytes * 1315423911ull + dt * 31 + op;
  void *send = nullptr, *recv = nullptr;
  // With -D the host buffers are the reference copy: the call gets device pointers at the same
  // offsets, and the device buffers are refreshed from the host ones before each checked call.
  const size_t span = std::max(s.sendElems, s.recvElems) * es;
  auto onDevice = [&](void* p) -> void* {
    if (!job.dev) return p;
    auto* b = static_cast<unsigned char*>(p);
    auto* sb = static_cast<unsigned char*>(sendBase);
    if (b >= sb && b <= sb + span) return static_cast<unsigned char*>(job.dev->send()) + (b - sb);
    return static_cast<unsigned char*>(job.dev->recv()) + (b - static_cast<unsigned char*>(recvBase));
  };
  auto upload = [&] {
    if (!job.dev) return;
    job.dev->ToDevice(job.dev->send(), sendBase, span);
    job.dev->ToDevice(job.dev->recv(), recvBase, span);
  };
  void* stream = job.dev ? job.dev->stream() : nullptr;
  auto sync = [&] {
    if (job.dev && !job.dev->Sync()) {
      fprintf(stderr, "tessera-perf rank %d: the device stream failed: %s\n", job.rank, tcclGetLastError(job.measured));
      exit(1);
    }
  };
  PrepareInput(c, s, dt, op, root, job, inPlace, sendBase, recvBase, &send, &recv, seed);
  upload();
  for (int i = 0; i < args.warmup; ++i)
    CHECK_TCCL(c.run(onDevice(send), onDevice(recv), s, dt, op, root, job.measured, stream));
  sync();
  Barrier(job);
  double t0 = Now();
  for (int i = 0; i < args.iters; ++i)
    CHECK_TCCL(c.run(onDevice(send), onDevice(recv), s, dt, op, root, job.measured, stream));
  sync();
  double local = (Now() - t0) / args.iters;
  double t = Aggregate(job, local, args.average);
  r.timeUs = t * 1e6;
  r.algbw = t > 0 ? (double)s.bytes / t / 1e9 : 0;
  r.busbw = r.algbw * c.busFactor(job.nranks);
  if (args.check) {
    PrepareInput(c, s, dt, op, root, job, inPlace, sendBase, recvBase, &send, &recv, seed);
    upload();
    CHECK_TCCL(c.run(onDevice(send), onDevice(recv), s, dt, op, root, job.measured, stream));
    sync();
    if (job.dev) job.dev->ToHost(recvBase, job.dev->recv(), span);
    CheckResult cr = job.checks.Check(c, recv, s, dt, op, job.rank, job.nranks, root, seed);
    r.wrong = SumAll(job, cr.wrong);
    r.det = SumAll(job, cr.det);
  }
  return r;
}

std::string Cols(const Result& r) {
  char b[128];
  if (r.wrong < 0)
    snprintf(b, sizeof(b), "%9.2f  %6.2f  %6.2f  %6s  %5s", r.timeUs, r.algbw, r.busbw, "N/A", "N/A");
  else
    snprintf(b, sizeof(b), "%9.2f  %6.2f  %6.2f  %6lld  %5lld", r.timeUs, r.algbw, r.busbw, (long long)r.wrong,
             (long long)r.det);
  return b;
}

void Json(Job& job, const char* coll, const Shape& s, tcclDataType_t dt, const char* redop, int root, const Result& o,
          const Result& i, bool hasInPlace) {
  if (!job.json) return;
  fprintf(job.json,
          "{\"collective\":\"%s\",\"nranks\":%d,\"size\":%zu,\"count\":%zu,\"type\":\"%s\",\"redop\":\"%s\",\"root\":%d,"
          "\"oop\":{\"time_us\":%.3f,\"algbw\":%.4f,\"busbw\":%.4f,\"wrong\":%lld,\"det\":%lld}",
          coll, job.nranks, s.bytes, s.bytes / tccl::DtypeSize(dt), TypeName(dt), redop, root, o.timeUs, o.algbw, o.busbw, (long long)o.wrong, (long long)o.det);
  if (hasInPlace)
    fprintf(job.json, ",\"ip\":{\"time_us\":%.3f,\"algbw\":%.4f,\"busbw\":%.4f,\"wrong\":%lld,\"det\":%lld}", i.timeUs,
            i.algbw, i.busbw, (long long)i.wrong, (long long)i.det);
  fprintf(job.json, "}\n");
}

}  // namespace

static int Run(int argc, char** argv) {
  Args args;
  std::string err = ParseArgs(argc, argv, &args);
  const Coll* coll = err.empty() ? FindColl(args.collective) : nullptr;
  if (!err.empty() || !coll) {
    fprintf(stderr, "tessera-perf: %s\n%s", err.empty() ? ("unknown collective '" + args.collective + "'").c_str() : err.c_str(),
            Usage().c_str());
    return 2;
  }
  Job job;
  tcclResult_t rc = tcclCommInitFromEnv(&job.comm, nullptr);
  if (rc == tcclInvalidUsage) {  // no launcher: a one-rank job
    tcclUniqueId id;
    CHECK_TCCL(tcclGetUniqueId(&id));
    CHECK_TCCL(tcclCommInitRank(&job.comm, 1, id, 0));
  } else if (rc != tcclSuccess) {
    fprintf(stderr, "tessera-perf: init failed: %s: %s\n", tcclGetErrorString(rc), tcclGetLastError(nullptr));
    return 1;
  }
  tcclCommUserRank(job.comm, &job.rank);
  tcclCommCount(job.comm, &job.nranks);
  job.measured = job.comm;
  if (job.rank == 0 && !args.json.empty()) job.json = fopen(args.json.c_str(), "w");

  const bool hasInPlace = std::string(coll->name) != "sendrecv";
  // Largest buffers needed over the sweep (8-byte elements bound every type's byte count).
  perf::Shape biggest = coll->shape(args.maxBytes, 1, job.nranks);
  size_t maxBufBytes = std::max(biggest.sendElems, biggest.recvElems) + 64;
  // -R: where the host buffers come from (single-copy paths, docs/single_copy.md).
  std::vector<unsigned char> sendVec, recvVec;
  unsigned char *sendPtr = nullptr, *recvPtr = nullptr;
  void* regs[2] = {nullptr, nullptr};
  if (args.registration == 1) {
    CHECK_TCCL(tcclMemAlloc(reinterpret_cast<void**>(&sendPtr), maxBufBytes));
    CHECK_TCCL(tcclMemAlloc(reinterpret_cast<void**>(&recvPtr), maxBufBytes));
  } else {
    try {
      sendVec.resize(maxBufBytes);
      recvVec.resize(maxBufBytes);
    } catch (const std::bad_alloc&) {
      fprintf(stderr, "tessera-perf rank %d: cannot allocate two host buffers of %zu bytes for -e %zu\n", job.rank,
              maxBufBytes, args.maxBytes);
      tcclCommDestroy(job.comm);
      return 1;
    }
    sendPtr = sendVec.data();
    recvPtr = recvVec.data();
    if (args.registration == 2) {
      CHECK_TCCL(tcclCommRegister(job.comm, sendPtr, maxBufBytes, &regs[0]));
      CHECK_TCCL(tcclCommRegister(job.comm, recvPtr, maxBufBytes, &regs[1]));
    }
  }
  const char* bufferKind = args.registration == 1 ? " (tcclMemAlloc)" : args.registration == 2 ? " (registered)" : "";
  std::unique_ptr<DeviceBuffers> devBufs;
  double memcpyGBps = 0;
  if (args.cudaDevice >= 0) {
    std::string err;
    devBufs = DeviceBuffers::Create(args.cudaDevice, maxBufBytes, &err);
    if (!devBufs) {
      fprintf(stderr, "tessera-perf rank %d: %s\n", job.rank, err.c_str());
      return 1;
    }
    job.dev = devBufs.get();
    tcclConfig_t config = TCCL_CONFIG_INITIALIZER;
    config.cudaDevice = args.cudaDevice;
    CHECK_TCCL(tcclCommSplit(job.comm, 0, job.rank, &job.measured, &config));
    // The device's own copy rate, measured now by rank 0 alone (the others wait): the yardstick
    // for the bandwidth columns (docs/gpu.md, "bytes-moved model").
    Barrier(job);
    if (job.rank == 0) memcpyGBps = job.dev->MemcpyGBps(args.maxBytes);
    Barrier(job);
  }

  // Header, as nccl-tests prints it.
  int64_t pid = getpid();
  std::vector<int64_t> pids(job.nranks);
  CHECK_TCCL(tcclAllGather(&pid, pids.data(), 1, tcclInt64, job.comm, nullptr));
  if (job.rank == 0) {
    char host[256] = {0};
    gethostname(host, sizeof(host) - 1);
    printf("# tessera-perf %s: nranks %d minBytes %zu maxBytes %zu step: %g(%s) warmup iters: %d iters: %d "
           "validation: %d\n#\n# Using %s memory%s\n",
           coll->name, job.nranks, args.minBytes, args.maxBytes, args.factor ? args.factor : (double)args.increment,
           args.factor ? "factor" : "bytes", args.warmup, args.iters, args.check, job.dev ? "CUDA device" : "host",
           job.dev ? "" : bufferKind);
    for (int r = 0; r < job.nranks; ++r)
      printf("#  Rank %2d Pid %7lld on %s (%s)\n", r, (long long)pids[r], host,
             job.dev ? ("CUDA device " + std::to_string(args.cudaDevice)).c_str() : "host memory");
    if (job.dev)
      printf("#\n# Device-to-device cudaMemcpy of %zu bytes (rank 0 alone): %.1f GB/s, counting bytes read + written\n",
             args.maxBytes, memcpyGBps);
    printf("#\n");
    printf("# %70s %-40s %s\n", "", "out-of-place", hasInPlace ? "in-place" : "");
    printf("# %10s  %12s  %8s  %6s  %6s  %9s  %6s  %6s  %6s  %5s  %9s  %6s  %6s  %6s  %5s\n", "size", "count", "type",
           "redop", "root", "time", "algbw", "busbw", "#wrong", "#det", "time", "algbw", "busbw", "#wrong", "#det");
    printf("# %10s  %12s  %8s  %6s  %6s  %9s  %6s  %6s  %6s  %5s  %9s  %6s  %6s  %6s  %5s\n", "(B)", "(elements)", "",
           "", "", "(us)", "(GB/s)", "(GB/s)", "", "", "(us)", "(GB/s)", "(GB/s)", "", "");
  }
  // Settle phase: freshly started ranks run slowly for tens of milliseconds while the OS scheduler
  // spreads them over the cores (measured here: the first sizes of a sweep ran 2-10x slower whatever
  // the per-size warm-up count). Synchronise for -W ms (200 by default) before anything is timed.
  // Rank 0 decides when to stop so every rank runs the same number of barriers.
  for (double start = Now(); args.settleMs > 0;) {
    int stop = job.rank == 0 && Now() - start > args.settleMs / 1000.0;
    CHECK_TCCL(tcclBroadcast(&stop, &stop, 1, tcclInt32, 0, job.comm, nullptr));
    if (stop) break;
  }
  int64_t totalWrong = 0;
  double lastTimeUs = 0;
  size_t lastBytes = 0;
  double busSum = 0;
  int busCount = 0;
  std::vector<int> roots;
  if (coll->rooted && args.root < 0)
    for (int r = 0; r < job.nranks; ++r) roots.push_back(r);
  else
    roots.push_back(coll->rooted ? args.root : -1);
  for (int root : roots) {
    if (coll->rooted && root >= job.nranks) {
      if (job.rank == 0) fprintf(stderr, "tessera-perf: root %d is not a rank of this %d-rank job\n", root, job.nranks);
      return 2;
    }
  }
  for (tcclDataType_t dt : args.types) {
    size_t es = tccl::DtypeSize(dt);
    std::vector<tcclRedOp_t> ops = coll->reduces ? args.ops : std::vector<tcclRedOp_t>{tcclSum};
    for (tcclRedOp_t op : ops) {
      for (int root : roots) {
        for (size_t bytes = args.minBytes; bytes <= args.maxBytes;
             bytes = args.factor ? (size_t)std::max<double>(bytes + 1, bytes * args.factor) : bytes + args.increment) {
          Shape s = coll->shape(bytes, es, job.nranks);
          Result o = Measure(*coll, args, job, bytes, dt, op, root < 0 ? 0 : root, false, sendPtr, recvPtr, es);
          Result i;
          if (hasInPlace) i = Measure(*coll, args, job, bytes, dt, op, root < 0 ? 0 : root, true, sendPtr, recvPtr, es);
          totalWrong += std::max<int64_t>(0, o.wrong) + std::max<int64_t>(0, i.wrong);
          lastTimeUs = o.timeUs;
          lastBytes = s.bytes;
          busSum += o.busbw + (hasInPlace ? i.busbw : 0);
          busCount += hasInPlace ? 2 : 1;
          const char* redop = coll->reduces ? OpNameOf(op) : "none";
          if (job.rank == 0) {
            printf("  %10zu  %12zu  %8s  %6s  %6d  %s  %s\n", s.bytes, s.bytes / es, TypeName(dt), redop, root,
                   Cols(o).c_str(), hasInPlace ? Cols(i).c_str() : "");
            fflush(stdout);
          }
          Json(job, coll->name, s, dt, redop, root, o, i, hasInPlace);
          if (args.factor == 0 && args.increment == 0) break;
        }
      }
    }
  }
  if (job.rank == 0) {
    printf("# Out of bounds values : %lld %s\n", (long long)totalWrong, totalWrong ? "FAILED" : "OK");
    printf("# Avg bus bandwidth    : %g \n#\n", busCount ? busSum / busCount : 0.0);
    if (job.dev && std::string(coll->name) == "all_reduce" && lastTimeUs > 0) {
      // Ranks sharing one device: every rank must read its input and write its output once, so
      // an all-reduce moves at least 2 x nranks x size bytes through device memory.
      double minGBps = 2.0 * job.nranks * lastBytes / (lastTimeUs * 1e-6) / 1e9;
      printf("# Bytes-moved model at %zu bytes (out of place): %d ranks x (read input + write output) = %.1f GB/s, "
             "%.0f%% of the device memcpy rate\n",
             lastBytes, job.nranks, minGBps, memcpyGBps > 0 ? 100.0 * minGBps / memcpyGBps : 0.0);
    }
  }
  if (job.json) fclose(job.json);
  if (job.measured != job.comm) tcclCommDestroy(job.measured);
  devBufs.reset();
  for (void* h : regs)
    if (h) tcclCommDeregister(job.comm, h);
  tcclCommDestroy(job.comm);
  if (args.registration == 1) {
    tcclMemFree(sendPtr);
    tcclMemFree(recvPtr);
  }
  return totalWrong ? 1 : 0;
}

// Memory the output check or the sweep could not get is reported, not an abort.
int main(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (const std::bad_alloc&) {
    fprintf(stderr, "tessera-perf: out of host memory (try a smaller -e)\n");
    return 1;
  }
}
