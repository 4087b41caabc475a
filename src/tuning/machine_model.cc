#include "tuning/machine_model.h"

#include <pthread.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include "config/params.h"
#include "core/hash.h"
#include "core/log.h"
#include "exec/waiter.h"
#include "kernels/host/reduce.h"
#include "tuning/pair_exchange.h"

namespace tccl {

namespace {

double Now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// Best of a few runs: the machine's capability, not the noise of the moment.
template <typename F>
double BestSeconds(int reps, F f) {
  double best = 1e30;
  for (int i = 0; i < reps; ++i) {
    double t0 = Now();
    f();
    best = std::min(best, Now() - t0);
  }
  return best;
}

// GB/s of copying `bytes` and of reducing `bytes` (float sum: dst = a + b).
void MeasureBandwidth(size_t bytes, int reps, double* copyGBps, double* reduceGBps) {
  std::vector<float> a(bytes / 4, 1.0f), b(bytes / 4, 2.0f), c(bytes / 4, 0.0f);
  ReduceFn sum = GetReduceFn(tcclFloat32, tcclSum);
  double tc = BestSeconds(reps, [&] { memcpy(c.data(), a.data(), bytes); });
  double tr = BestSeconds(reps, [&] { sum(c.data(), a.data(), b.data(), a.size()); });
  *copyGBps = (double)bytes / tc / 1e9;  // bytes delivered per second
  *reduceGBps = (double)bytes / tr / 1e9;
}

// One-way hand-over time between two threads taking turns on a shared word: pinned to two cores
// (a cache-line transfer) or to one core (the scheduler switches; the waiter yields).
double MeasureHandOverUs(int cpuA, int cpuB, int rounds) {
  std::atomic<int> turn{0};
  auto player = [&](int me, int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
    for (int i = 0; i < rounds; ++i) {
      while (turn.load(std::memory_order_acquire) != me) {
        if (cpuA == cpuB) sched_yield();
      }
      turn.store(1 - me, std::memory_order_release);
    }
  };
  double t0 = Now();
  std::thread other(player, 1, cpuB);
  player(0, cpuA);
  other.join();
  return (Now() - t0) * 1e6 / (2.0 * rounds);
}

std::vector<int> AllowedCpus() {
  cpu_set_t set;
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

std::string CpuModel() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 1);
  return "unknown";
}

}  // namespace

std::string MachineModel::Serialize() const {
  char buf[512];
  snprintf(buf, sizeof(buf),
           "tccl-machine-model 3\nhop_us %.4f\nswitch_us %.4f\ncopy_cache_gbps %.3f\ncopy_mem_gbps %.3f\n"
           "reduce_cache_gbps %.3f\nreduce_mem_gbps %.3f\ncache_bytes %zu\ncores %d\n"
           "exchange_copies_gbps %.3f\nexchange_cma_gbps %.3f\n",
           hopUs, switchUs, copyCacheGBps, copyMemGBps, reduceCacheGBps, reduceMemGBps, cacheBytes, cores,
           exchangeCopiesGBps, exchangeCmaGBps);
  return buf;
}

Status MachineModel::Parse(const std::string& text, MachineModel* out) {
  std::istringstream in(text);
  std::string key;
  MachineModel m;
  int version = 0, seen = 0;
  // Older files are not read, so the machine is measured again: version 1 had no exchange rates,
  // version 2 measured the two copies through two staging slots instead of a ring's eight.
  if (!(in >> key >> version) || key != "tccl-machine-model" || version != 3)
    return InvalidArgument("not a version 3 tccl machine model");
  while (in >> key) {
    double v = 0;
    // The exchange rates may be 0 (not measured); every other value is positive.
    const bool mayBeZero = key.rfind("exchange_", 0) == 0;
    if (!(in >> v) || !((v > 0 || (mayBeZero && v == 0)) && v < 1e12))
      return InvalidArgument("bad value for '%s' in the machine model", key.c_str());
    double* target = key == "hop_us"                 ? &m.hopUs
                     : key == "switch_us"            ? &m.switchUs
                     : key == "copy_cache_gbps"      ? &m.copyCacheGBps
                     : key == "copy_mem_gbps"        ? &m.copyMemGBps
                     : key == "reduce_cache_gbps"    ? &m.reduceCacheGBps
                     : key == "reduce_mem_gbps"      ? &m.reduceMemGBps
                     : key == "exchange_copies_gbps" ? &m.exchangeCopiesGBps
                     : key == "exchange_cma_gbps"    ? &m.exchangeCmaGBps
                                                     : nullptr;
    if (target) {
      *target = v;
    } else if (key == "cache_bytes") {
      m.cacheBytes = (size_t)v;
    } else if (key == "cores") {
      m.cores = (int)v;
    } else {
      return InvalidArgument("unknown key '%s' in the machine model", key.c_str());
    }
    ++seen;
  }
  if (seen != 10) return InvalidArgument("the machine model has %d of its 10 values", seen);
  *out = m;
  return Status::Ok();
}

MachineModel MeasureMachine() {
  MachineModel m;
  std::vector<int> cpus = AllowedCpus();
  // The measurements pin the calling thread; it gets its own cores back at the end (else the
  // measuring rank ran pinned to one core, and counted one usable core, from then on).
  cpu_set_t callers;
  const bool restore = sched_getaffinity(0, sizeof(callers), &callers) == 0;
  m.cores = std::max<int>(1, (int)cpus.size());
  // In cache: 64 KiB per buffer (three buffers stay in L2).
  MeasureBandwidth(64 << 10, 200, &m.copyCacheGBps, &m.reduceCacheGBps);
  // The cache a rank really gets is measured, not read from CPUID: VMs report the whole socket's
  // L3 (508 MiB on the development VM) while a core group sees a slice of it. Copy bandwidth is
  // measured at growing sizes up to 64 MiB per buffer (beyond the L3 slices of current CPUs, and
  // three such buffers are the measurement's memory); the cache ends where the rate falls below
  // the geometric mean of the in-cache rate and the 64 MiB rate.
  std::vector<std::pair<size_t, double>> curve;
  for (size_t bytes = 256 << 10; bytes <= ((size_t)64 << 20); bytes *= 4) {
    double copy = 0, reduce = 0;
    MeasureBandwidth(bytes, bytes >= (16u << 20) ? 3 : 10, &copy, &reduce);
    curve.push_back({bytes, copy});
    m.copyMemGBps = copy;
    m.reduceMemGBps = reduce;
  }
  const double edge = std::sqrt(m.copyCacheGBps * m.copyMemGBps);
  m.cacheBytes = 64 << 10;
  for (const auto& [bytes, gbps] : curve)
    if (gbps >= edge) m.cacheBytes = 2 * bytes;  // source and destination were both in cache
  int a = cpus.empty() ? 0 : cpus[0];
  m.switchUs = MeasureHandOverUs(a, a, 2000);
  m.hopUs = cpus.size() >= 2 ? MeasureHandOverUs(cpus[0], cpus[1], 20000) : m.switchUs;
  if (cpus.size() >= 2) {
    const PairExchangeRates rates = MeasurePairExchange(cpus[0], cpus[1]);
    m.exchangeCopiesGBps = rates.copiesGBps;
    m.exchangeCmaGBps = rates.cmaGBps;
  }
  if (restore) sched_setaffinity(0, sizeof(callers), &callers);
  m.source = "measured";
  return m;
}

std::string MachineModelPath() {
  std::string p = ParamString("TUNING_FILE");
  if (p == "none") return "";
  if (!p.empty()) return p;
  const char* home = getenv("XDG_CACHE_HOME");
  std::string dir = home && *home ? std::string(home) + "/tccl" : "";
  if (dir.empty()) {
    const char* h = getenv("HOME");
    if (!h || !*h) return "";
    dir = std::string(h) + "/.cache/tccl";
  }
  std::string id = CpuModel() + "|" + std::to_string(AllowedCpus().size()) + "|" + std::to_string(sysconf(_SC_LEVEL3_CACHE_SIZE));
  char name[64];
  snprintf(name, sizeof(name), "/machine-%016llx.txt", (unsigned long long)HashString(id.c_str()));
  return dir + name;
}

MachineModel LoadOrMeasureMachine() {
  // Once per process: later communicators reuse it.
  static std::mutex mu;
  static bool have = false;
  static MachineModel cached;
  std::lock_guard<std::mutex> g(mu);
  if (have) return cached;
  const std::string path = MachineModelPath();
  if (!path.empty()) {
    std::ifstream f(path);
    std::stringstream text;
    text << f.rdbuf();
    if (f && MachineModel::Parse(text.str(), &cached).ok()) {
      cached.source = "file " + path;
      have = true;
      return cached;
    }
  }
  cached = MeasureMachine();
  have = true;
  if (path.empty()) return cached;
  std::string dir = path.substr(0, path.rfind('/'));
  for (size_t at = 1; (at = dir.find('/', at)) != std::string::npos; ++at) mkdir(dir.substr(0, at).c_str(), 0755);
  mkdir(dir.c_str(), 0755);
  std::string tmp = path + ".tmp" + std::to_string(getpid());
  {
    std::ofstream out(tmp);
    out << cached.Serialize();
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    unlink(tmp.c_str());
    TCCL_INFO(kLogTuning, "could not write the machine model to %s: %s", path.c_str(), strerror(errno));
  } else {
    cached.source = "measured, saved to " + path;
  }
  return cached;
}

}  // namespace tccl
