// The α-β-γ parameters of this machine, measured once and cached (issue #3, SPEC section 9):
//   α  cost of one round — a rank waiting for a message a peer has just sent. Two values: with a
//      core per rank (a cache-line hand-over between cores) and with ranks sharing cores (a
//      hand-over through the scheduler: the sender must run before the receiver can).
//   β  copy bandwidth (memcpy), in cache and from memory;
//   γ  reduce bandwidth (the float sum kernel: two inputs, one output), in cache and from memory.
// And how fast two cores exchange blocks of plain buffers, by two copies or by CMA
// (tuning/pair_exchange.h), which decides how ranks with a core each exchange them.
// Measured in-process in ~0.1 s by the first communicator on a machine that has no cache file,
// then read from the file (TCCL_TUNING_FILE) by every later one.
#pragma once

#include <cstddef>
#include <string>

#include "core/status.h"

namespace tccl {

struct MachineModel {
  double hopUs = 0.3;        // α with a core per rank
  double switchUs = 3.0;     // α when ranks share cores (per hand-over)
  double copyCacheGBps = 20, copyMemGBps = 10;
  double reduceCacheGBps = 20, reduceMemGBps = 10;
  size_t cacheBytes = 32 << 20;  // last-level cache: working sets below it run at the cache rates
  // GB/s each way of two cores exchanging 512 KiB blocks in 128 KiB messages (the rings' slice),
  // through staging slots and by CMA; 0 where not measured (one core, CMA refused).
  double exchangeCopiesGBps = 0, exchangeCmaGBps = 0;
  int cores = 1;
  std::string source = "defaults";  // "measured", "file <path>", or "defaults"

  std::string Serialize() const;  // "key value" lines
  static Status Parse(const std::string& text, MachineModel* out);
};

// Measures this machine (takes ~0.1 s; run it where no other rank competes for the cores).
MachineModel MeasureMachine();

// The cache file for this machine: TCCL_TUNING_FILE, else ~/.cache/tccl/machine-<cpu>.txt where
// <cpu> hashes the CPU model, core count and cache size; "" when caching is off ("none").
std::string MachineModelPath();

// The model from the cache file, else measured now and written there (atomically; a cache that
// cannot be written is reported at INFO and the measurement kept for this process).
MachineModel LoadOrMeasureMachine();

}  // namespace tccl
