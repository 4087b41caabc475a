// One simulated call's arguments (src/exec/simulator.h), and how a failure names it: for the
// simulator's and the schedules' tests.
#pragma once

#include <string>

#include "algorithms/registry.h"
#include "algorithms/schedule.h"

namespace tccl_test {

inline tccl::CollArgs SimArgs(int n, size_t count, size_t slice, bool inPlace, tcclRedOp_t op = tcclSum) {
  tccl::CollArgs a;
  a.nranks = n;
  a.count = count;
  a.sliceElems = slice;
  a.inPlace = inPlace;
  a.op = op;
  a.root = n > 1 ? (int)(count % n) : 0;
  return a;
}

inline std::string What(const tccl::AlgorithmInfo& alg, const tccl::CollArgs& a) {
  return std::string(alg.name) + " " + tccl::CollName(alg.coll) + " N=" + std::to_string(a.nranks) +
         " count=" + std::to_string(a.count) + " slice=" + std::to_string(a.sliceElems) +
         (a.inPlace ? " in-place" : "");
}

}  // namespace tccl_test
