#include "core/cycle_clock.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace tccl {

namespace {

uint64_t SteadyNs() {
  return (uint64_t)std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

uint64_t Raw() {
#if defined(__x86_64__)
  return __rdtsc();  // constant and invariant on every x86-64 CPU this runs on (nonstop_tsc)
#else
  return SteadyNs();
#endif
}

struct Origin {
  uint64_t cycles, ns;
};

const Origin& Start() {
  static const Origin o{Raw(), SteadyNs()};
  return o;
}

}  // namespace

uint64_t CycleNow() {
  (void)Start();  // fixes the calibration origin on first use
  return Raw();
}

#if defined(__x86_64__)
namespace {
constexpr uint64_t kCalibrationNs = 10'000'000;  // at least 10 ms of reference interval: ~0.1%
std::atomic<double> calibrated{0};

double RateSinceOrigin() {
  const Origin& o = Start();
  uint64_t c = Raw(), n = SteadyNs();
  return (double)(n - o.ns) * 1e-9 / (double)(c - o.cycles);
}
}  // namespace
#endif

double SecondsPerCycleIfCalibrated() {
#if defined(__x86_64__)
  double v = calibrated.load(std::memory_order_relaxed);
  if (v > 0) return v;
  if (SteadyNs() - Start().ns < kCalibrationNs) return 0;
  v = RateSinceOrigin();
  calibrated.store(v, std::memory_order_relaxed);
  return v;
#else
  return 1e-9;
#endif
}

double CyclesToSeconds(uint64_t a, uint64_t b) {
#if defined(__x86_64__)
  static std::once_flag once;
  std::call_once(once, [] {
    while (SteadyNs() - Start().ns < kCalibrationNs) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  const double secondsPerCycle = SecondsPerCycleIfCalibrated();
  return b >= a ? (double)(b - a) * secondsPerCycle : -(double)(a - b) * secondsPerCycle;
#else
  return b >= a ? (double)(b - a) * 1e-9 : -(double)(a - b) * 1e-9;
#endif
}

}  // namespace tccl
