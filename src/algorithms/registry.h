// The table of algorithms (name, collective, generator, description) and the one function that
// picks an algorithm for a call. `TCCL_ALGO` narrows the choice (see algo_filter.h).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "algorithms/algo_filter.h"
#include "algorithms/schedule.h"
#include "core/status.h"

namespace tccl {

using Generator = Schedule (*)(const CollArgs&);

struct AlgorithmInfo {
  const char* name;
  CollKind coll;
  Generator generate;
  bool canonicalOrder;  // reduces in the canonical tree order of docs/determinism.md (or reduces nothing)
  const char* description;
  // Automatic selection considers it only from this message size on (bytes of the call's count);
  // TCCL_ALGO may still force it below. For algorithms whose measured crossover the cost model
  // does not capture; each value says where it was measured.
  size_t minBytes = 0;
};

struct CostContext;  // src/tuning/cost_model.h

const std::vector<AlgorithmInfo>& AllAlgorithms();
// Names of the algorithms offered for a collective (what a TCCL_ALGO clause may name for it).
std::set<std::string> OfferedAlgorithms(CollKind k);

// The algorithm for this call: among those the filter and the determinism mode admit, the one the
// cost model expects to be fastest (ties: table order); an error if the filter excludes them all.
Status SelectAlgorithm(const CollArgs& a, const AlgoFilter& filter, const CostContext& ctx, const AlgorithmInfo** out);

}  // namespace tccl
