#include "tuning/cost_model.h"

#include <algorithm>
#include <cstdio>
#include <deque>
#include <set>
#include <vector>

#include "algorithms/registry.h"
#include "algorithms/schedule.h"
#include "topology/cache_size.h"

namespace tccl {

namespace {

bool IsRecv(OpKind k) { return k == OpKind::Recv || k == OpKind::RecvReduce; }

// Whether the receiver of this send reads it straight from the sender's memory (single_copy.h).
bool ReadByPeer(const Schedule& s, const Op& o, const CollArgs& a) {
  const size_t threshold = s.sharedScratch && o.src.buf == kScratchBuf ? a.sharedScratchBytes : a.singleCopyBytes;
  return threshold && o.count * a.elemSize >= threshold;
}

// Bytes one rank's schedule moves and reduces. A message read in one copy by its receiver
// (single_copy.h) costs the sender nothing; a local copy (an out-of-place root's or own block's)
// costs what a channel copy does, which is what makes a broadcast root that only copies locally
// (direct, single copy) cheaper than one that also streams into a ring (chain).
// Sends from the shared scratch of a Schedule::sharedScratch schedule are read in one copy from
// CollArgs::sharedScratchBytes on, whatever the user's buffers (ReadByPeer).
void CountBytes(const Schedule& s, int n, const CollArgs& a, AlgoCost* c) {
  const size_t elemSize = a.elemSize;
  for (const Step& step : s.steps)
    for (const Op& o : step.ops) {
      const double b = (double)o.count * (double)elemSize;
      const bool readByPeer = ReadByPeer(s, o, a);
      if ((o.kind == OpKind::Send && !readByPeer) || o.kind == OpKind::Recv || o.kind == OpKind::Copy) c->copyBytes += b;
      if (o.kind == OpKind::RecvReduce || o.kind == OpKind::Reduce) c->reduceBytes += b;
      if (o.kind == OpKind::TreeReduce) c->reduceBytes += (n - 1) * b;
    }
}

// The latency path: rounds of hand-overs. In each round every rank posts the sends of the step it
// is at and completes it if every receive of the step matches a message posted in an earlier
// round (one hand-over later); a rank completes at most one step with receives per round but any
// number of send-only or local steps. Rounds = rounds in which some receive completed.
double LatencyRounds(const std::vector<Schedule>& all) {
  const int n = (int)all.size();
  std::vector<std::deque<int>> posted((size_t)n * n);  // (from, to): rounds their messages were posted
  std::vector<size_t> at(n, 0);
  std::vector<bool> sent(n, false);
  double rounds = 0;
  for (int round = 1;; ++round) {
    bool moved = false, received = false, done = true;
    for (int r = 0; r < n; ++r) {
      bool recvThisRound = false;
      while (at[r] < all[r].steps.size()) {
        const std::vector<Op>& ops = all[r].steps[at[r]].ops;
        if (!sent[r]) {
          for (const Op& o : ops)
            if (o.kind == OpKind::Send && o.count) posted[(size_t)r * n + o.peer].push_back(round);
          sent[r] = true;
          moved = true;
        }
        bool hasRecv = false, ready = true;
        std::vector<int> need(n, 0);
        for (const Op& o : ops)
          if (IsRecv(o.kind) && o.count) {
            hasRecv = true;
            const std::deque<int>& q = posted[(size_t)o.peer * n + r];
            ready = ready && (int)q.size() > need[o.peer] && q[need[o.peer]] < round;
            ++need[o.peer];
          }
        if (!ready || (hasRecv && recvThisRound)) break;
        for (int p = 0; p < n; ++p)
          for (int k = 0; k < need[p]; ++k) posted[(size_t)p * n + r].pop_front();
        ++at[r];
        sent[r] = false;
        moved = true;
        recvThisRound |= hasRecv;
      }
      received |= recvThisRound;
      done = done && at[r] == all[r].steps.size();
    }
    rounds += received;
    if (done || !moved) return rounds;
  }
}

}  // namespace

double SharedCoresMakespan(std::vector<double> work, double cores) {
  std::sort(work.begin(), work.end());
  double t = 0, done = 0;
  for (size_t i = 0; i < work.size(); ++i) {
    const double rate = std::min(1.0, cores / (double)(work.size() - i));
    t += (work[i] - done) / rate;
    done = work[i];
  }
  return t;
}

AlgoCost ScheduleCost(const AlgorithmInfo& alg, const CollArgs& in_) {
  // Ranks must choose alike, and whether a call is in place is each rank's own business (a
  // broadcast's non-roots count as in place; any rank may pass sendbuff == recvbuff): so every
  // call is priced as out of place.
  CollArgs in = in_;
  in.inPlace = false;
  CollArgs a = in;
  a.sliceElems = std::max<size_t>(1, a.count);
  const int n = std::max(1, a.nranks);
  // Every rank up to 64 (the latency path needs them all); beyond, a sample of the busiest
  // candidates and each one's own step count as its rounds.
  std::vector<int> ranks;
  if (n <= 64) {
    for (int r = 0; r < n; ++r) ranks.push_back(r);
  } else {
    ranks = {0, 1, a.root, RankMod(a.root + 1, n), RankMod(a.root - 1, n), n / 2, n - 1};
    std::sort(ranks.begin(), ranks.end());
    ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  }
  AlgoCost worst;
  std::vector<Schedule> all;
  for (int r : ranks) {
    a.rank = r;
    all.push_back(alg.generate(a));
    AlgoCost c;
    // Whether a message is read in one copy depends on its size, so then bytes are counted on the
    // schedule as it will run (sliced). Without single copy for the call's buffers, only a schedule
    // that sends from shared scratch has such messages; any other counts the same bytes unsliced.
    // Ring messages are counted on it too where the call is at most a slice per rank: the direct
    // algorithms slice even a schedule generated unsliced (DirectSliceElems), so only the sliced
    // one has the call's messages. Larger calls count them unsliced (fewer; there the bytes
    // decide): every rank's sliced schedule at every size took a 64-rank decision table from 0.8 s
    // to 68 s.
    const bool fewSlices = in.count <= (size_t)n * in.sliceElems;
    const bool singleCopies = a.singleCopyBytes || (a.sharedScratchBytes && all.back().sharedScratch);
    Schedule asRun;
    CollArgs sliced = in;
    sliced.rank = r;
    if (singleCopies || fewSlices) asRun = alg.generate(sliced);
    if (singleCopies)
      CountBytes(asRun, n, sliced, &c);
    else
      CountBytes(all.back(), n, a, &c);
    for (const Step& step : all.back().steps) {
      if (n > 64)
        c.rounds += std::any_of(step.ops.begin(), step.ops.end(),
                                [](const Op& o) { return o.kind == OpKind::Send || IsRecv(o.kind); });
      // Messages read in one copy are left out: next to the copy it starts, such a message's hop is
      // nothing, and whether those copies run side by side (direct) or one after another (a tree)
      // is what decides, which no count here sees; for them the rounds decide, as they did.
      c.sends += std::count_if(step.ops.begin(), step.ops.end(), [&](const Op& o) {
        return o.kind == OpKind::Send && o.count && !ReadByPeer(all.back(), o, in);
      });
    }
    for (const Step& step : (fewSlices ? asRun : all.back()).steps)
      c.ringMessages += std::count_if(step.ops.begin(), step.ops.end(), [&](const Op& o) {
        return o.kind == OpKind::Send && o.count && o.count * a.elemSize > a.lineMessageBytes;
      });
    // Except CMA reads (CollArgs::singleCopyByCma): a system call and a page pinning per message,
    // so each message as run (sliced) counts. On the Xeon VM the 2-rank 1 MiB broadcast by CMA took
    // 56 us in the chain's 128 KiB slices and 51 us in one message (direct).
    if (in.singleCopyByCma)
      for (const Step& step : asRun.steps)
        c.sends += std::count_if(step.ops.begin(), step.ops.end(), [&](const Op& o) {
          return o.kind == OpKind::Send && o.count && ReadByPeer(asRun, o, in);
        });
    worst.rounds = std::max(worst.rounds, c.rounds);
    worst.sends = std::max(worst.sends, c.sends);
    worst.copyBytes = std::max(worst.copyBytes, c.copyBytes);
    worst.reduceBytes = std::max(worst.reduceBytes, c.reduceBytes);
    worst.totalCopyBytes += c.copyBytes * n / ranks.size();
    worst.totalReduceBytes += c.reduceBytes * n / ranks.size();
    worst.ringMessages += c.ringMessages * n / ranks.size();
    if (n <= 64) worst.perRank.push_back({c.copyBytes, c.reduceBytes});
  }
  if (n <= 64) worst.rounds = LatencyRounds(all);
  return worst;
}

double ModeledUs(const AlgoCost& c, const CollArgs& a, const CostContext& ctx) {
  const MachineModel& m = ctx.machine;
  const double bytes = (double)a.count * (double)a.elemSize;
  const double share = std::max(1.0, (double)ctx.host.localRanks / std::max(1, ctx.host.cores));
  const double alpha = share > 1 ? m.switchUs * share : m.hopUs;
  const bool inCache = 2.0 * bytes * ctx.host.localRanks <= (double)m.cacheBytes;
  const double copyBytesPerUs = (inCache ? m.copyCacheGBps : m.copyMemGBps) * 1e3;
  const double reduceBytesPerUs = (inCache ? m.reduceCacheGBps : m.reduceMemGBps) * 1e3;
  const double busiest = c.copyBytes / copyBytesPerUs + c.reduceBytes / reduceBytesPerUs;
  if (share <= 1) {
    // A broadcast's root posts its messages one after another, each a line that a reader polls
    // from its own core, and that costs it about a hop per reader: forced on a 16-core Xeon at 8
    // ranks, 8 B, a stream of calls took 1.45-2.23 us direct (the root sends 7), 0.76-0.81 on the
    // binomial tree (the root sends 3) and 0.54-0.56 on the chain (1), with a hop of
    // 0.28 us; the rounds alone priced direct cheapest (docs/performance.md, "On 16 cores"). The
    // same runs showed no such order among the all-reduce, all-gather and reduce-scatter
    // algorithms, whose ranks all send and receive alike, so only the broadcast is charged.
    const double hops = a.kind == CollKind::Broadcast ? std::max(c.rounds, c.sends) : c.rounds;
    return hops * alpha + busiest;
  }
  // A reduction's partials arrive level by level, so its busy ranks wait on each other rather than
  // share the cores (forced at 8 ranks: the canonical-tree all-reduce of 16 MiB ran 21.7 ms against
  // the two-shot's 16.4, although their totals are equal): every rank is counted as busy as the
  // busiest. The receivers of data that is only moved copy independently of each other.
  // This host's part of the totals (ranks are spread evenly over hosts).
  const double hostPart = (double)ctx.host.localRanks / std::max(1, a.nranks);
  const bool reduces = a.kind == CollKind::AllReduce || a.kind == CollKind::ReduceScatter || a.kind == CollKind::Reduce;
  if (reduces) {
    // And each ring message a hand-over, shared among the cores: a message mostly finds its
    // receiver off the core (a rank waiting on several peers is handed the core again for each),
    // and its header, copy and credit are work besides its bytes. The rounds count one hand-over
    // per level of the latency path, which leaves a schedule of many messages per level under-priced:
    // forced on the 2-vCPU Xeon VM (hand-over 0.53 us), the canonical tree (14 messages at 8 ranks)
    // took 42-46 us at 32 KiB and 71-77 at 64 KiB against the two-shot's 69-106 and 126-216 (112
    // messages), also ahead at 6 ranks from 16 KiB, while at 4 ranks they were level (24 messages
    // against 6); docs/performance.md, "Messages per hand-over". Line messages are not charged:
    // with 512 B-1 KiB blocks in lines the two-shot stayed ahead of the tree at 4-8 KiB.
    const double handOvers = c.ringMessages * hostPart / std::max(1, ctx.host.cores);
    // Where the canonical order is required and the working set is in cache, the ranks instead
    // share the cores as the scheduler shares them (SharedCoresMakespan; the cores are this
    // host's, spread over all ranks): the two-shot and direct, every rank as busy as the next, cost
    // the same either way, while the canonical tree's root (three partials at 8 ranks) finishes
    // alone on a core once the ranks that only pass a partial on are done, well before ranks per
    // core x its bytes. Forced on the 2-vCPU Xeon VM: the tree took 0.63-0.85 of the two-shot's
    // time at 64-128 KiB and 5-8 ranks, and 0.67-0.87 of direct's for a 3-rank reduce of 16-256
    // KiB (docs/performance.md, "Ranks that leave their cores"). Out of cache the tree fell behind
    // as sizes grew (8 ranks: 1.1x the two-shot's time at 1 MiB, 1.3x at 16 MiB), and where the
    // run-to-run mode admits the chain, ring, double binary tree and recursive halving, the
    // makespan moved choices the measurements did not support (a 4-8 rank reduce from the chain to
    // the tree at 32-128 KiB: 1.05-1.31x slower at 8 of 13): there the busiest rank keeps its
    // ranks-per-core charge.
    double work = share * busiest;
    if (inCache && a.requireCanonical && (int)c.perRank.size() == a.nranks) {
      std::vector<double> perRank;
      for (const AlgoCost::RankBytes& r : c.perRank)
        perRank.push_back(r.copy / copyBytesPerUs + r.reduce / reduceBytesPerUs);
      work = SharedCoresMakespan(perRank, (double)ctx.host.cores * a.nranks / std::max(1, ctx.host.localRanks));
    }
    return c.rounds * alpha + work + handOvers * m.switchUs;
  }
  // The mean rank's share of this host's total keeps every core busy, but what the busiest rank
  // does beyond the mean is on the critical path, since the ranks it feeds wait for it while it
  // works. So a schedule that spreads its copies evenly beats one with the same total and a busier
  // rank (forced, 8 ranks on 2 cores, 1-2 MiB broadcast, docs/performance.md: the chain, every rank
  // copying the message twice, took 289-365 us in place at 1 MiB against 357-475 for the binomial
  // tree, whose root copies it three times).
  const double total = (c.totalCopyBytes / copyBytesPerUs + c.totalReduceBytes / reduceBytesPerUs) * hostPart;
  const double mean = total / std::max(1, ctx.host.localRanks);
  return c.rounds * alpha + total / std::max(1, ctx.host.cores) + std::max(0.0, busiest - mean);
}

std::string DecisionTable(int nranks, bool strict, const AlgoFilter& filter, const CostContext& ctx) {
  const MachineModel& m = ctx.machine;
  std::string out;
  char line[640];
  snprintf(line, sizeof(line),
           "tuning: %d ranks, %d on this host, %d cores; machine model (%s): hop %.2f us, hand-over %.2f us, "
           "copy %.1f/%.1f GB/s, reduce %.1f/%.1f GB/s (cache/memory), cache %zu KiB (measured), "
           "exchange %.1f GB/s by two copies / %.1f by CMA; determinism %s; the cache rules assume "
           "%zu KiB (%s)\n",
           nranks, ctx.host.localRanks, ctx.host.cores, m.source.c_str(), m.hopUs, m.switchUs, m.copyCacheGBps,
           m.copyMemGBps, m.reduceCacheGBps, m.reduceMemGBps, m.cacheBytes >> 10, m.exchangeCopiesGBps,
           m.exchangeCmaGBps, strict ? "strict" : "run", LastLevelCacheBytes() >> 10, LastLevelCacheSource());
  out += line;
  const CollKind kinds[] = {CollKind::AllReduce, CollKind::ReduceScatter, CollKind::AllGather,
                            CollKind::Broadcast,  CollKind::Reduce,        CollKind::AllToAll};
  for (CollKind k : kinds) {
    out += std::string("tuning: ") + CollName(k) + " (modeled us per algorithm; * = chosen; float sum)\n";
    const std::set<std::string> offered = OfferedAlgorithms(k);
    for (size_t bytes = 8; bytes <= ((size_t)256 << 20); bytes *= 8) {
      CollArgs a;
      a.kind = k;
      a.nranks = nranks;
      a.count = bytes / 4;
      a.elemSize = 4;
      a.requireCanonical = strict && (k == CollKind::AllReduce || k == CollKind::ReduceScatter || k == CollKind::Reduce);
      a.sharedScratchBytes = ctx.sharedScratchBytes;
      a.lineMessageBytes = ctx.lineMessageBytes;
      const AlgorithmInfo* pick = nullptr;
      std::string cells;
      if (!SelectAlgorithm(a, filter, ctx, &pick).ok()) pick = nullptr;
      for (const AlgorithmInfo& alg : AllAlgorithms()) {
        if (alg.coll != k) continue;
        // In parentheses: not admitted (TCCL_ALGO, or not canonical where strict mode needs it).
        const bool admitted = filter.Allows(k, alg.name, offered) && (!a.requireCanonical || alg.canonicalOrder);
        // "-": below the algorithm's minimum size for automatic selection.
        if (bytes < alg.minBytes)
          snprintf(line, sizeof(line), "  %s%s -%s", admitted ? "" : "(", alg.name, admitted ? "" : ")");
        else
          snprintf(line, sizeof(line), "  %s%s%s %.2f%s", admitted ? "" : "(", &alg == pick ? "*" : "", alg.name,
                   ModeledUs(ScheduleCost(alg, a), a, ctx), admitted ? "" : ")");
        cells += line;
      }
      // The choice when this call's buffers can be read by the peers in one copy (single_copy.h).
      if (ctx.singleCopyBytes) {
        CollArgs sc = a;
        sc.singleCopyBytes = ctx.singleCopyBytes;
        const AlgorithmInfo* scPick = nullptr;
        if (SelectAlgorithm(sc, filter, ctx, &scPick).ok() && scPick) {
          snprintf(line, sizeof(line), "  | single copy: *%s %.2f", scPick->name, ModeledUs(ScheduleCost(*scPick, sc), sc, ctx));
          cells += line;
        }
      }
      snprintf(line, sizeof(line), "tuning:   %10zu B:%s\n", bytes, cells.c_str());
      out += line;
    }
  }
  return out;
}

}  // namespace tccl
