// The multi-rank correctness sweep: every collective x dtype x op x count, in place and out of
// place, on (optionally) unaligned buffers, with order-sensitive inputs. Every rank of a
// communicator calls RunSweep with the same options; it returns this rank's failures.
#pragma once

#include <string>
#include <vector>

#include "tccl/tccl.h"

namespace tccl_test {

// Device memory for a sweep on a CUDA communicator, given as functions so that this library needs no
// CUDA (tests/gpu supplies them). The sweep keeps its host buffers as the reference copy: before
// each call it copies them to device buffers of the same layout, and copies the output back after.
struct DeviceHooks {
  void* (*alloc)(size_t bytes) = nullptr;
  void (*release)(void* p) = nullptr;
  void (*toDevice)(void* dst, const void* src, size_t bytes) = nullptr;
  void (*toHost)(void* dst, const void* src, size_t bytes) = nullptr;
  tcclResult_t (*sync)(void* stream) = nullptr;  // waits for the stream; tcclSuccess or an error
  void* stream = nullptr;                        // the cudaStream_t every call is issued on
};

// Where the sweep's host buffers come from (single-copy paths, docs/single_copy.md).
enum class HostBuffers { Plain, MemAlloc, Registered };

struct SweepOptions {
  std::vector<size_t> counts = {0, 1, 7, 1009};
  std::vector<size_t> largeCounts = {1 << 20};  // run only for largeTypes with sum
  // Under TCCL_TEST_SWEEP=quick (the sanitizer builds of .ci/run) large counts are capped here.
  size_t quickLargeCount = 1 << 16;
  std::vector<tcclDataType_t> types;            // empty: all ten
  std::vector<tcclDataType_t> largeTypes = {tcclFloat32, tcclInt8};
  std::vector<std::string> colls;               // empty: all
  bool unaligned = true;
  // Every reduction must equal tcclReduceReference bit for bit (canonical algorithms only);
  // otherwise only exact types must, and floats must be within the rounding bound.
  bool expectCanonical = false;
  // Run each float reduction twice and require identical bits (run-level determinism).
  bool checkRepeatable = true;
  // Also run every call with the ranks mixing in place and out of place (even ranks in place):
  // each rank's choice, by its pointers, as in NCCL.
  bool mixInPlace = false;
  // Run only the calls with every rank in place.
  bool inPlaceOnly = false;
  // Issue every call on a host stream and synchronize, instead of blocking calls.
  bool useStream = false;
  HostBuffers buffers = HostBuffers::Plain;
  // Run on device buffers (a CUDA communicator).
  const DeviceHooks* device = nullptr;
};

std::vector<std::string> RunSweep(tcclComm_t comm, const SweepOptions& opt);

// TCCL_TEST_SWEEP=quick: the sanitizer builds of .ci/run, where every access is instrumented and
// sweeps shrink to stay inside CI's time (tests/run_sanitizers.sh).
bool QuickSweep();

}  // namespace tccl_test
