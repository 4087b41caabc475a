// Algorithm selection by an α-β-γ cost model (issue #3): the modeled time of an algorithm is
//   rounds x α + work,  work = bytes copied / β + bytes reduced / γ
// with the counts read off the algorithm's own schedules (ScheduleCost) and the machine's measured
// parameters (machine_model.h). With at most one rank per core, work is the busiest rank's, and a
// broadcast pays at least one α per message its busiest sender posts (the root's fan-out). With
// more ranks than cores (oversubscribed: ranks take turns, and α becomes a scheduler hand-over),
// a reduction's work is ranks-per-core x the busiest rank's (its partials arrive level by level,
// so busy ranks wait on each other; where the canonical order is required and the working set is
// in cache, the ranks' work shared over the cores as the scheduler shares them,
// SharedCoresMakespan) and each of its ring messages a hand-over shared among the cores (a
// message mostly finds its receiver off the core), and the work of a collective that
// only moves data is this host's total over its cores plus the busiest rank's excess over the mean
// rank (the ranks it feeds wait for that excess; cost_model.cc says what it changed). β and γ
// are the in-cache rates while the host's working set (2 x bytes per local rank) fits in the
// last-level cache, else the memory rates.
#pragma once

#include <string>
#include <vector>

#include "algorithms/algo_filter.h"
#include "algorithms/registry.h"
#include "tuning/machine_model.h"

namespace tccl {

struct HostShape {
  int localRanks = 1;  // ranks of the communicator on this host
  int cores = 1;       // cores they may run on
};

struct CostContext {
  MachineModel machine;
  HostShape host;
  size_t singleCopyBytes = 0;     // the threshold when peers can read some buffers in one copy (for the table)
  size_t sharedScratchBytes = 0;  // CollArgs::sharedScratchBytes of this communicator (for the table)
  size_t lineMessageBytes = 0;    // CollArgs::lineMessageBytes of this communicator (for the table)
};

// What one call of an algorithm costs, counted from the schedules the executor would run,
// generated unsliced (slicing changes no byte count, except which messages are large enough for a
// single copy; it overlaps rounds, which the model ignores):
// rounds = the hand-overs on the latency path, found by running every rank's schedule in rounds
// (a message posted in one round can be received in the next); copyBytes and reduceBytes = the
// busiest rank's bytes sent plus received through channels, and bytes combined (an N-input tree
// reduce counts N-1), local copies included. Above 64 ranks, ranks are sampled and rounds = the most steps of one rank.
struct AlgoCost {
  double rounds = 0;
  // The busiest sender's messages (unsliced: a broadcast root's fan-out), and where messages are
  // read by CMA (CollArgs::singleCopyByCma) each of those as run, sliced.
  double sends = 0;
  double copyBytes = 0;
  double reduceBytes = 0;
  double totalCopyBytes = 0;    // summed over all ranks (estimated from the sample above 64)
  double totalReduceBytes = 0;
  // Messages of all ranks above CollArgs::lineMessageBytes, each a ring message with a header and
  // a credit: as run (sliced) where the call is at most a slice per rank, unsliced above
  // (ScheduleCost); estimated from the sample above 64 ranks.
  double ringMessages = 0;
  // Each rank's bytes, every rank's up to 64 ranks (empty above, where ranks are sampled).
  struct RankBytes {
    double copy = 0, reduce = 0;
  };
  std::vector<RankBytes> perRank;
};
AlgoCost ScheduleCost(const AlgorithmInfo& alg, const CollArgs& a);

// How long ranks with these amounts of work take on `cores` cores shared fairly: while more ranks
// are busy than there are cores, each gets an equal share of them (as the scheduler shares them),
// and a rank that is done leaves its share to the others; no rank runs faster than one core.
// Ranks that work alike take their total over the cores; one that works more than the others
// finishes alone on a core.
double SharedCoresMakespan(std::vector<double> work, double cores);

double ModeledUs(const AlgoCost& c, const CollArgs& a, const CostContext& ctx);

// The TCCL_DEBUG_SUBSYS=TUNING table: the parameters, then for every collective and size from
// 8 B to 256 MiB each admitted algorithm's modeled time and the choice.
std::string DecisionTable(int nranks, bool strict, const AlgoFilter& filter, const CostContext& ctx);

}  // namespace tccl
