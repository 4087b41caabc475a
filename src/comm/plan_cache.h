// The last few collective plans of a communicator (selected algorithm + generated schedule), so
// that a training loop repeating the same calls pays for selection and schedule generation once.
// At 8 bytes on 2 ranks those cost more than moving the data (set building in the selection,
// vector growth in the generators: ~0.3 us of a ~1 us call).
//
// A plan is a pure function of the CollArgs and the dtype (the communicator's TCCL_ALGO filter
// and determinism mode never change), so the key is exactly those fields.
#pragma once

#include <cstdint>
#include <vector>

#include "algorithms/registry.h"
#include "algorithms/schedule.h"
#include "comm/flight_recorder.h"
#include "exec/executor.h"
#include "transports/shm/shm_transport.h"

namespace tccl {

struct Plan {
  const AlgorithmInfo* alg = nullptr;
  uint8_t algoIndex = 0;  // alg's row in AllAlgorithms(), as the messages' tags carry it
  Schedule schedule;
  // Also fixed by the key, so worked out once: the reduce and divide kernels for (dtype, op), and
  // the flight-recorder entry (op, dtype, algorithm, count, root, peers) less its sequence number.
  ExecKernels kernels;
  FlightEntry record;
  // Its settings for the shared-memory connections: whether its ring messages may start over at a
  // ring's start (ShmHost::RingRestartFor, by the rings its schedules write on this host).
  ShmOperation shm;
  // Whether each call offers its own blocks for CMA reads (an all-to-all where AllToAllByCma
  // holds; Communicator::RunCollective).
  bool offerBlocksByCma = false;
};

class PlanCache {
 public:
  // The plan for these arguments, or null.
  const Plan* Find(const CollArgs& a, tcclDataType_t dt) const;
  // Keeps `plan` for these arguments (replacing the oldest when full) and returns it.
  const Plan* Add(const CollArgs& a, tcclDataType_t dt, Plan plan);

 private:
  // Small and scanned linearly: a loop uses a handful of distinct calls; more just cycle.
  static constexpr size_t kEntries = 16;
  struct Entry {
    CollArgs args;
    tcclDataType_t dt;
    Plan plan;
  };
  std::vector<Entry> entries_;
  size_t next_ = 0;  // the slot Add overwrites when full
  mutable size_t lastHit_ = 0;  // the entry Find returned last (checked first)
};

}  // namespace tccl
