#include "algorithms/registry.h"

#include <cmath>

#include "algorithms/generators.h"
#include "core/log.h"
#include "tuning/cost_model.h"

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
       "order; one hop, N-1 copies per rank: for small messages (2 ranks: reduced as the peer's "
       "1 MiB pieces arrive, in place through two scratch slots)"},
      {"twoshot", CollKind::AllReduce, &TwoShotAllReduce, true,
       "direct reduce-scatter (each chunk's owner tree-reduces every rank's slice in canonical order) "
       "then direct all-gather; 2(N-1)/N of the data per rank: large messages, strict determinism"},
      {"ring", CollKind::AllReduce, &RingAllReduce, false,
       "ring reduce-scatter then ring all-gather, pipelined in slices; 2(N-1)/N of the data per rank: "
       "for large messages"},
      {"rdouble", CollKind::AllReduce, &RecursiveDoublingAllReduce, false,
       "recursive doubling: log2(N) rounds exchanging the whole partial with rank XOR 2^k (extra ranks "
       "fold in first); butterfly order, deterministic run to run: small and medium messages, run mode"},
      {"rhalving", CollKind::AllReduce, &RecursiveHalvingAllReduce, false,
       "Rabenseifner: recursive halving reduce-scatter then recursive doubling all-gather; 2(N-1)/N of "
       "the data per rank in 2 log2(N) rounds; butterfly order, run mode: medium and large messages"},
      {"tree", CollKind::AllReduce, &CanonicalTreeAllReduce, true,
       "reduce along the canonical tree itself (node [lo,hi) computed at rank lo), then binomial "
       "broadcast from rank 0; 2 ceil(log2 N) hops: small messages at larger N, strict determinism"},
      {"dbtree", CollKind::AllReduce, &DoubleBinaryTreeAllReduce, false,
       "double binary tree: each half of the message is reduced up one binary tree and broadcast back "
       "down it in pipelined slices, the two trees placed so that every rank is inner in at most "
       "one; 2 log2(N) hops and ~1x the message per rank: medium and large messages at larger N, "
       "run mode"},
      {"direct", CollKind::ReduceScatter, &DirectReduceScatter, true,
       "each rank sends every chunk's slice to its owner, which tree-reduces the N slices in canonical "
       "order; (N-1)/N of the data per rank"},
      {"ring", CollKind::ReduceScatter, &RingReduceScatter, false,
       "ring, partials double-buffered per slice; each rank ends with its own chunk (rotating order)"},
      {"rhalving", CollKind::ReduceScatter, &RecursiveHalvingReduceScatter, false,
       "recursive halving: log2(N) rounds, each sending half of what is left to rank XOR 2^k (extra "
       "ranks fold in first); butterfly order, run mode; scratch of the whole input"},
      {"ring", CollKind::AllGather, &RingAllGather, true, "ring, pipelined in slices (no reduction)"},
      {"direct", CollKind::AllGather, &DirectAllGather, true,
       "every rank sends its block to every other rank in one step (no reduction): small messages"},
      {"staged", CollKind::AllGather, &StagedAllGather, true,
       "every rank copies its block in 512 KiB pieces into two slots of scratch every rank maps, the "
       "others read each piece from there in one copy: N copies of each block instead of 2(N-1), "
       "for large messages in buffers peers cannot map (no reduction)"},
      {"chain", CollKind::Broadcast, &ChainBroadcast, true,
       "pipelined chain from the root in ring order (no reduction)"},
      {"direct", CollKind::Broadcast, &DirectBroadcast, true,
       "the root sends the whole message to every rank in one step (no reduction): with single copy "
       "the receivers read the root's buffer at once and the root copies nothing"},
      {"tree", CollKind::Broadcast, &BinomialBroadcast, true,
       "binomial tree from the root: floor(log2 N) hand-overs of the whole message on the longest path "
       "(no reduction): small messages"},
      {"staged", CollKind::Broadcast, &StagedBroadcast, true,
       "the root copies 1 MiB pieces into two slots of scratch every rank maps, the others read each "
       "piece from there in one copy: N copies of the message in all instead of the chain's 2(N-1), "
       "for large messages in buffers peers cannot map (no reduction)",
       // From 256 KiB. Below 2 MiB a piece is the whole message and waits for every reader, which
       // the model does not see; the 2 MiB minimum it had was measured before CopyBytes
       // (kernels/host/copy.h), when 4-512 KiB copies out of the page-aligned scratch into malloc'd
       // buffers took glibc's slow path. Since, alternated on 2 cores: 8 ranks 256 KiB-1 MiB 18-53%
       // less time than the tree and chain it displaces (1 MiB 595 -> 280 us), 3 and 4 ranks level
       // or faster (4 ranks 1 MiB 184-233 -> 154-195), 128 KiB at 6 ranks slower (48 against
       // 38-40), which the model would pick where 128 KiB messages are read in one copy
       // (perf/results/host-2026-11-26/staged_broadcast_min_256k_ab.txt). At 2 ranks, and with a
       // core per rank, the model keeps the chain. The cost model sees only the copies it saves.
       (size_t)256 << 10},
      {"direct", CollKind::Reduce, &DirectReduce, true,
       "every rank sends each slice to the root, which tree-reduces the N slices in canonical order"},
      {"tree", CollKind::Reduce, &CanonicalTreeReduce, true,
       "reduce along the canonical tree itself (node [lo,hi) computed at rank lo), then rank 0 hands "
       "the result to the root; ceil(log2 N) hops: small messages at larger N, strict determinism"},
      {"chain", CollKind::Reduce, &ChainReduce, false,
       "pipelined chain towards the root, partials double-buffered per slice (chain order)"},
      {"direct", CollKind::AllToAll, &DirectAllToAll, true,
       "every block sent and received in one step (no reduction): small messages"},
      {"pairwise", CollKind::AllToAll, &PairwiseAllToAll, true,
       "ranks meet in pairs and swap blocks, one partner per round (round-robin tournament); in "
       "place, each outgoing slice first copied aside into one of two scratch slots (no reduction)"},
  };
  return table;
}

std::set<std::string> OfferedAlgorithms(CollKind k) {
  std::set<std::string> offered;
  for (const AlgorithmInfo& alg : AllAlgorithms())
    if (alg.coll == k) offered.insert(alg.name);
  return offered;
}

Status SelectAlgorithm(const CollArgs& a, const AlgoFilter& filter, const CostContext& ctx, const AlgorithmInfo** out) {
  const std::set<std::string> offered = OfferedAlgorithms(a.kind);
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
  // The one selection rule: the cheapest under the measured cost model, among those meant for
  // this size (any, if none is).
  double best = 0;
  *out = nullptr;
  const size_t bytes = a.count * a.elemSize;
  for (const AlgorithmInfo* alg : allowed) {
    double t = bytes < alg->minBytes ? HUGE_VAL : ModeledUs(ScheduleCost(*alg, a), a, ctx);
    if (!*out || t < best) *out = alg, best = t;
  }
  return Status::Ok();
}

}  // namespace tccl
