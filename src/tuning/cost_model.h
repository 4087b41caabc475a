// Algorithm selection by an α-β-γ cost model (issue #3): the modeled time of an algorithm is
//   rounds x α + share x (bytes copied / β + bytes reduced / γ)
// with the per-rank counts from the algorithm's cost function (src/algorithms/costs.cc), the
// machine's measured parameters (machine_model.h), and `share` = ranks per core on this host
// (oversubscribed ranks take turns on the cores, and α becomes a scheduler hand-over). β and γ
// are the in-cache rates while the host's working set (2 x bytes per local rank) fits in the
// last-level cache, else the memory rates.
#pragma once

#include <string>

#include "algorithms/algo_filter.h"
#include "algorithms/generators.h"
#include "tuning/machine_model.h"

namespace tccl {

struct HostShape {
  int localRanks = 1;  // ranks of the communicator on this host
  int cores = 1;       // cores they may run on
};

struct CostContext {
  MachineModel machine;
  HostShape host;
};

double ModeledUs(CostFn cost, int nranks, double bytes, const CostContext& ctx);

// The TCCL_DEBUG_SUBSYS=TUNING table: the parameters, then for every collective and size from
// 8 B to 256 MiB each admitted algorithm's modeled time and the choice.
std::string DecisionTable(int nranks, bool strict, const AlgoFilter& filter, const CostContext& ctx);

}  // namespace tccl
