// tessera-perf command line: the flags of nccl-tests (SPEC section 8).
#pragma once

#include <string>
#include <vector>

#include "tccl/tccl.h"

namespace perf {

struct Args {
  std::string collective;
  size_t minBytes = 32 << 20, maxBytes = 32 << 20;
  double factor = 2;       // -f
  size_t increment = 0;    // -i (used when -f is 0... as nccl-tests: -i is the step when -f is not given)
  int iters = 20;          // -n
  int warmup = 5;          // -w
  int check = 1;           // -c
  std::vector<tcclRedOp_t> ops{tcclSum};               // -o (a name, all, or a comma-separated list)
  std::vector<tcclDataType_t> types{tcclFloat32};      // -d (the same)
  int root = 0;            // -r (-1: every root)
  int average = 1;         // -a: 0 rank 0, 1 mean, 2 min, 3 max
  std::string json;        // -J file
  int cudaDevice = -1;     // -D: buffers on this CUDA device (a CUDA communicator); -1 host memory
  int registration = 0;    // -R: host buffers 0 plain, 1 from tcclMemAlloc, 2 registered (tcclCommRegister)
  int settleMs = 200;      // -W: milliseconds of barriers before the first timed size (0: none)
};

// Returns "" on success, else the error to print.
std::string ParseArgs(int argc, char** argv, Args* out);
std::string Usage();
const char* TypeName(tcclDataType_t t);
const char* OpNameOf(tcclRedOp_t o);

}  // namespace perf
