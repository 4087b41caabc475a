#include "tuning/cost_model.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include "algorithms/registry.h"

namespace tccl {

double ModeledUs(CostFn cost, int nranks, double bytes, const CostContext& ctx) {
  const MachineModel& m = ctx.machine;
  const AlgoCost c = cost(nranks, bytes);
  const double share = std::max(1.0, (double)ctx.host.localRanks / std::max(1, ctx.host.cores));
  const double alpha = share > 1 ? m.switchUs * share : m.hopUs;
  const bool inCache = 2.0 * bytes * ctx.host.localRanks <= (double)m.cacheBytes;
  const double copyBytesPerUs = (inCache ? m.copyCacheGBps : m.copyMemGBps) * 1e3;
  const double reduceBytesPerUs = (inCache ? m.reduceCacheGBps : m.reduceMemGBps) * 1e3;
  return c.rounds * alpha + share * (c.copyBytes / copyBytesPerUs + c.reduceBytes / reduceBytesPerUs);
}

static std::set<std::string> OfferedNames(CollKind k) {
  std::set<std::string> offered;
  for (const AlgorithmInfo& alg : AllAlgorithms())
    if (alg.coll == k) offered.insert(alg.name);
  return offered;
}

std::string DecisionTable(int nranks, bool strict, const AlgoFilter& filter, const CostContext& ctx) {
  const MachineModel& m = ctx.machine;
  std::string out;
  char line[512];
  snprintf(line, sizeof(line),
           "tuning: %d ranks, %d on this host, %d cores; machine model (%s): hop %.2f us, hand-over %.2f us, "
           "copy %.1f/%.1f GB/s, reduce %.1f/%.1f GB/s (cache/memory), cache %zu KiB (measured); determinism %s\n",
           nranks, ctx.host.localRanks, ctx.host.cores, m.source.c_str(), m.hopUs, m.switchUs, m.copyCacheGBps,
           m.copyMemGBps, m.reduceCacheGBps, m.reduceMemGBps, m.cacheBytes >> 10, strict ? "strict" : "run");
  out += line;
  const CollKind kinds[] = {CollKind::AllReduce, CollKind::ReduceScatter, CollKind::AllGather,
                            CollKind::Broadcast,  CollKind::Reduce,        CollKind::AllToAll};
  for (CollKind k : kinds) {
    out += std::string("tuning: ") + CollName(k) + " (modeled us per algorithm; * = chosen; float sum)\n";
    for (size_t bytes = 8; bytes <= ((size_t)256 << 20); bytes *= 8) {
      CollArgs a;
      a.kind = k;
      a.nranks = nranks;
      a.count = bytes / 4;
      a.elemSize = 4;
      a.requireCanonical = strict && (k == CollKind::AllReduce || k == CollKind::ReduceScatter || k == CollKind::Reduce);
      const AlgorithmInfo* pick = nullptr;
      std::string cells;
      if (!SelectAlgorithm(a, filter, ctx, &pick).ok()) pick = nullptr;
      for (const AlgorithmInfo& alg : AllAlgorithms()) {
        if (alg.coll != k) continue;
        // In parentheses: not admitted (TCCL_ALGO, or not canonical where strict mode needs it).
        const bool admitted = filter.Allows(k, alg.name, OfferedNames(k)) && (!a.requireCanonical || alg.canonicalOrder);
        snprintf(line, sizeof(line), "  %s%s%s %.2f%s", admitted ? "" : "(", &alg == pick ? "*" : "", alg.name,
                 ModeledUs(alg.cost, nranks, (double)bytes, ctx), admitted ? "" : ")");
        cells += line;
      }
      snprintf(line, sizeof(line), "tuning:   %10zu B:%s\n", bytes, cells.c_str());
      out += line;
    }
  }
  return out;
}

}  // namespace tccl
