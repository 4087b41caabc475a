// The doorbell's handshake (transports/shm/doorbell.h) as a litmus test. Round after round, a
// ringer stores a message and rings while the owner announces a sleep and then looks for the
// message, both starting together. The handshake must never let both miss: the owner not seeing
// the message and the ringer not seeing the announcement would leave the owner asleep until its
// timeout, the lost wake-up that the fence on one side or the other rules out.
#include <gtest/gtest.h>

#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "core/asymmetric_fence.h"
#include "transports/shm/doorbell.h"

namespace tccl {
namespace {

// Two threads meet here; spins briefly, then yields (the suite runs beside other tests).
class Rendezvous {
 public:
  void Meet() {
    const uint32_t gen = gen_.load(std::memory_order_acquire);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) == 1) {
      arrived_.store(0, std::memory_order_relaxed);
      gen_.store(gen + 1, std::memory_order_release);
      return;
    }
    for (int spins = 0; gen_.load(std::memory_order_acquire) == gen; ++spins)
      if (spins > 1000) std::this_thread::yield();
  }

 private:
  std::atomic<uint32_t> arrived_{0};
  std::atomic<uint32_t> gen_{0};
};

// Busy work of about n nanoseconds: the sides start each round at offsets that sweep the few
// hundred nanoseconds in which a ringer's message can still sit in its store buffer.
void Delay(int n) {
  for (volatile int i = 0; i < n; i = i + 1) {
  }
}

// The CPUs this process may use, so the two sides can be pinned apart: sharing one, they would
// take turns instead of racing.
std::vector<int> UsableCpus() {
  cpu_set_t set;
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

void PinTo(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

struct Outcome {
  int lost = 0;     // rounds where neither side saw the other
  int rang = 0;     // rounds where the ringer saw the announcement
  int saw = 0;      // rounds where the owner saw the message
};

Outcome Rounds(bool ownerOffersHeavyFences, int rounds, int ringerCpu, int ownerCpu) {
  Doorbell bell;
  if (ownerOffersHeavyFences) bell.OfferHeavyFences();
  alignas(64) std::atomic<uint64_t> message{0};
  Rendezvous start, end;
  std::thread ringer([&] {
    PinTo(ringerCpu);
    for (int i = 1; i <= rounds; ++i) {
      start.Meet();
      Delay(i * 7 % 97);
      message.store((uint64_t)i, std::memory_order_release);
      bell.Ring();
      end.Meet();
    }
  });
  cpu_set_t was;
  pthread_getaffinity_np(pthread_self(), sizeof(was), &was);
  PinTo(ownerCpu);
  Outcome o;
  for (int i = 1; i <= rounds; ++i) {
    const uint32_t before = bell.Snapshot();
    start.Meet();
    Delay(i * 13 % 89);
    bell.Announce();
    const bool saw = message.load(std::memory_order_acquire) == (uint64_t)i;
    end.Meet();
    const bool rang = bell.Snapshot() != before;
    bell.Withdraw();  // before the next start: the ringer's next check must not see this round's sleeper
    o.saw += saw;
    o.rang += rang;
    o.lost += !saw && !rang;
  }
  ringer.join();
  pthread_setaffinity_np(pthread_self(), sizeof(was), &was);
  return o;
}

// Rounds on two CPUs of this process, until both orders have happened (a busy machine may hold
// one side back for a whole batch).
Outcome Race(bool ownerOffersHeavyFences) {
  const std::vector<int> cpus = UsableCpus();
  Outcome all;
  if (cpus.size() < 2) return all;
  for (int batch = 0; batch < 5 && (all.saw == 0 || all.rang == 0); ++batch) {
    const Outcome o = Rounds(ownerOffersHeavyFences, 20000, cpus[0], cpus[1]);
    all.lost += o.lost;
    all.saw += o.saw;
    all.rang += o.rang;
  }
  return all;
}

TEST(Doorbell, NoLostWakeupWhereTheSleeperFencesForTheRinger) {
  if (UsableCpus().size() < 2) GTEST_SKIP() << "needs two CPUs for the sides to race";
  const Outcome o = Race(true);
  RecordProperty("heavy_fences", RegisteredForHeavyFences() ? "membarrier" : "refused: both sides fence");
  EXPECT_EQ(o.lost, 0) << "rounds where the owner missed the message and the ringer the announcement";
  // Both orders happened, so the rounds did race (the ringer first: the owner saw the message;
  // the owner first: the ringer rang).
  EXPECT_GT(o.saw, 0);
  EXPECT_GT(o.rang, 0);
}

TEST(Doorbell, NoLostWakeupWhereTheRingerFences) {
  if (UsableCpus().size() < 2) GTEST_SKIP() << "needs two CPUs for the sides to race";
  const Outcome o = Race(false);
  EXPECT_EQ(o.lost, 0) << "rounds where the owner missed the message and the ringer the announcement";
  EXPECT_GT(o.saw, 0);
  EXPECT_GT(o.rang, 0);
}

}  // namespace
}  // namespace tccl
