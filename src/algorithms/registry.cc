#include "algorithms/registry.h"

#include "algorithms/generators.h"
#include "core/log.h"

namespace tccl {

const char* CollName(CollKind k) {
  switch (k) {
    case CollKind::AllReduce: return "all_reduce";
    case CollKind::Broadcast: return "broadcast";
    case CollKind::Reduce: return "reduce";
    case CollKind::AllGather: return "all_gather";
    case CollKind::ReduceScatter: return "reduce_scatter";
    case CollKind::AllToAll: return "alltoall";
  }
  return "?";
}

const std::vector<AlgorithmInfo>& AllAlgorithms() {
  static const std::vector<AlgorithmInfo> table = {
      {"direct", CollKind::AllReduce, &DirectAllReduce, true,
       "every rank sends its input to every other rank, then reduces the N inputs locally in canonical "
       "order; one hop, N-1 copies per rank: for small messages"},
      {"ring", CollKind::AllReduce, &RingAllReduce, false,
       "ring reduce-scatter then ring all-gather, pipelined in slices; 2(N-1)/N of the data per rank: "
       "for large messages"},
      {"ring", CollKind::ReduceScatter, &RingReduceScatter, false,
       "ring, partials double-buffered per slice; each rank ends with its own chunk"},
      {"ring", CollKind::AllGather, &RingAllGather, false, "ring, pipelined in slices"},
      {"chain", CollKind::Broadcast, &ChainBroadcast, true,
       "pipelined chain from the root in ring order (no reduction)"},
      {"chain", CollKind::Reduce, &ChainReduce, false,
       "pipelined chain towards the root, partials double-buffered per slice"},
      {"pairwise", CollKind::AllToAll, &PairwiseAllToAll, true,
       "step k exchanges with ranks r+k and r-k (no reduction)"},
  };
  return table;
}

// Direct all-reduce sends N-1 copies of the input from every rank; ring sends 2(N-1)/N of it in
// 2(N-1) sequential steps. Each step costs a wake-up of the next rank (~5-10 us when ranks share
// cores) while a copy of 16 KiB costs ~1-2 us, so below 16 KiB the hops dominate and direct wins.
// Issue #3 replaces this rule with a measured cost model.
constexpr size_t kDirectAllReduceMaxBytes = 16 << 10;

Status SelectAlgorithm(const CollArgs& a, const AlgoFilter& filter, const AlgorithmInfo** out) {
  std::vector<const AlgorithmInfo*> allowed;
  std::set<std::string> offered;
  for (const AlgorithmInfo& alg : AllAlgorithms())
    if (alg.coll == a.kind) offered.insert(alg.name);
  for (const AlgorithmInfo& alg : AllAlgorithms())
    if (alg.coll == a.kind && filter.Allows(a.kind, alg.name, offered)) allowed.push_back(&alg);
  if (allowed.empty()) {
    std::string list;
    for (const std::string& n : offered) list += (list.empty() ? "" : ", ") + n;
    return InvalidArgument("TCCL_ALGO excludes every algorithm for %s (available: %s)", CollName(a.kind),
                           list.c_str());
  }
  const AlgorithmInfo* pick = allowed.front();
  if (a.kind == CollKind::AllReduce) {
    const char* want = a.count * a.elemSize <= kDirectAllReduceMaxBytes ? "direct" : "ring";
    for (const AlgorithmInfo* alg : allowed)
      if (std::string(alg->name) == want) pick = alg;
  }
  *out = pick;
  return Status::Ok();
}

}  // namespace tccl
