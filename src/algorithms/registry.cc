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
      {"twoshot", CollKind::AllReduce, &TwoShotAllReduce, true,
       "direct reduce-scatter (each chunk's owner tree-reduces every rank's slice in canonical order) "
       "then direct all-gather; 2(N-1)/N of the data per rank: large messages, strict determinism"},
      {"ring", CollKind::AllReduce, &RingAllReduce, false,
       "ring reduce-scatter then ring all-gather, pipelined in slices; 2(N-1)/N of the data per rank: "
       "for large messages"},
      {"direct", CollKind::ReduceScatter, &DirectReduceScatter, true,
       "each rank sends every chunk's slice to its owner, which tree-reduces the N slices in canonical "
       "order; (N-1)/N of the data per rank"},
      {"ring", CollKind::ReduceScatter, &RingReduceScatter, false,
       "ring, partials double-buffered per slice; each rank ends with its own chunk (rotating order)"},
      {"ring", CollKind::AllGather, &RingAllGather, true, "ring, pipelined in slices (no reduction)"},
      {"chain", CollKind::Broadcast, &ChainBroadcast, true,
       "pipelined chain from the root in ring order (no reduction)"},
      {"direct", CollKind::Reduce, &DirectReduce, true,
       "every rank sends each slice to the root, which tree-reduces the N slices in canonical order"},
      {"chain", CollKind::Reduce, &ChainReduce, false,
       "pipelined chain towards the root, partials double-buffered per slice (chain order)"},
      {"pairwise", CollKind::AllToAll, &PairwiseAllToAll, true,
       "step k exchanges with ranks r+k and r-k (no reduction)"},
  };
  return table;
}

// Direct all-reduce sends N-1 copies of the input from every rank; ring and two-shot send
// 2(N-1)/N of it in 2(N-1) (ring) or 2 (two-shot) rounds per slice. Each round costs a wake-up of
// the next rank (~5-10 us when ranks share cores) while a copy of 16 KiB costs ~1-2 us, so below
// 16 KiB the rounds dominate and direct wins. Issue #3 replaces this rule with a measured model.
constexpr size_t kDirectAllReduceMaxBytes = 16 << 10;

// The algorithm this call should use when nothing is excluded: the one short selection rule.
static const char* Preferred(const CollArgs& a) {
  const size_t bytes = a.count * a.elemSize;
  switch (a.kind) {
    case CollKind::AllReduce:
      if (bytes <= kDirectAllReduceMaxBytes) return "direct";
      return a.requireCanonical ? "twoshot" : "ring";
    case CollKind::ReduceScatter: return a.requireCanonical ? "direct" : "ring";
    case CollKind::Reduce: return a.requireCanonical ? "direct" : "chain";
    case CollKind::AllGather: return "ring";
    case CollKind::Broadcast: return "chain";
    case CollKind::AllToAll: return "pairwise";
  }
  return "";
}

Status SelectAlgorithm(const CollArgs& a, const AlgoFilter& filter, const AlgorithmInfo** out) {
  std::set<std::string> offered;
  for (const AlgorithmInfo& alg : AllAlgorithms())
    if (alg.coll == a.kind) offered.insert(alg.name);
  std::vector<const AlgorithmInfo*> allowed;
  std::string refused;  // allowed by TCCL_ALGO but not canonical
  for (const AlgorithmInfo& alg : AllAlgorithms()) {
    if (alg.coll != a.kind || !filter.Allows(a.kind, alg.name, offered)) continue;
    if (a.requireCanonical && !alg.canonicalOrder) {
      refused += std::string(refused.empty() ? "" : ", ") + alg.name;
      continue;
    }
    allowed.push_back(&alg);
  }
  if (allowed.empty() && !refused.empty())
    return InvalidUsage("TCCL_ALGO allows only %s for %s, which does not reduce in the canonical order that "
                        "TCCL_DETERMINISM=strict requires for floating-point sum, prod and avg; allow a canonical "
                        "algorithm or set TCCL_DETERMINISM=run",
                        refused.c_str(), CollName(a.kind));
  if (allowed.empty()) {
    std::string list;
    for (const std::string& n : offered) list += (list.empty() ? "" : ", ") + n;
    return InvalidArgument("TCCL_ALGO excludes every algorithm for %s (available: %s)", CollName(a.kind),
                           list.c_str());
  }
  const char* want = Preferred(a);
  *out = allowed.front();
  for (const AlgorithmInfo* alg : allowed)
    if (std::string(alg->name) == want) *out = alg;
  return Status::Ok();
}

}  // namespace tccl
