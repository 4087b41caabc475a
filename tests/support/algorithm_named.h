// The table's entry for `name` of collective `k` (nullptr if there is none), for tests.
#pragma once

#include <string>

#include "algorithms/registry.h"

namespace tccl_test {

inline const tccl::AlgorithmInfo* AlgorithmNamed(tccl::CollKind k, const std::string& name) {
  for (const tccl::AlgorithmInfo& alg : tccl::AllAlgorithms())
    if (alg.coll == k && name == alg.name) return &alg;
  return nullptr;
}

}  // namespace tccl_test
