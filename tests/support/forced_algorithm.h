// The TCCL_ALGO value that forces one algorithm of the table: "all_reduce" + "ring" ->
// "allreduce:ring" (the collective in TCCL_ALGO's spelling, docs/env.md).
#pragma once

#include <string>

#include "algorithms/registry.h"

namespace tccl_test {

inline std::string ForcedAlgorithm(const tccl::AlgorithmInfo& alg) {
  std::string key;
  for (const char* ch = tccl::CollName(alg.coll); *ch; ++ch)
    if (*ch != '_') key += *ch;
  return key + ":" + alg.name;
}

}  // namespace tccl_test
