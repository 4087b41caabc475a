// Configuration beyond the parameter registry (tests/params_test.cc): the TCCL_ALGO grammar and
// selection, launcher environment parsing, and the values of tcclConfig_t.
#include <gtest/gtest.h>
#include <unistd.h>

#include <set>
#include <sstream>

#include "algorithms/registry.h"
#include "tuning/cost_model.h"
#include "bootstrap/launcher_env.h"
#include "config/params.h"
#include "tests/support/algorithm_named.h"
#include "tests/support/scoped_env.h"

namespace tccl {
namespace {

using tccl_test::AlgorithmNamed;
using tccl_test::EnvGuard;
TEST(AlgoGrammar, AcceptsNcclForms) {
  AlgoFilter f;
  EXPECT_TRUE(ParseAlgoFilter("", &f).ok());
  EXPECT_TRUE(ParseAlgoFilter("ring", &f).ok());
  EXPECT_TRUE(ParseAlgoFilter("ring,direct;allreduce:direct", &f).ok());
  EXPECT_TRUE(ParseAlgoFilter("allreduce:^direct; broadcast:chain", &f).ok());
  EXPECT_TRUE(ParseAlgoFilter("AllReduce:Ring", &f).ok());
  EXPECT_TRUE(ParseAlgoFilter("all_reduce:ring", &f).ok());
}

TEST(AlgoGrammar, RejectsUnknownTokens) {
  AlgoFilter f;
  Status st = ParseAlgoFilter("rnig", &f);
  EXPECT_EQ(st.code(), tcclInvalidArgument);
  EXPECT_NE(st.message().find("unknown algorithm 'rnig'"), std::string::npos) << st.message();
  EXPECT_EQ(ParseAlgoFilter("allreduc:ring", &f).code(), tcclInvalidArgument);
  EXPECT_EQ(ParseAlgoFilter("allreduce:", &f).code(), tcclInvalidArgument);
  EXPECT_EQ(ParseAlgoFilter("allreduce:ring;allreduce:direct", &f).code(), tcclInvalidArgument);
  EXPECT_EQ(ParseAlgoFilter("ring,,direct", &f).code(), tcclInvalidArgument);
}

const AlgorithmInfo* Select(const std::string& spec, CollKind k, size_t count, Status* st = nullptr,
                            bool strict = false, size_t singleCopyBytes = 0) {
  AlgoFilter f;
  EXPECT_TRUE(ParseAlgoFilter(spec, &f).ok());
  CollArgs a;
  a.requireCanonical = strict;
  a.kind = k;
  a.nranks = 4;
  a.count = count;
  a.elemSize = 4;
  a.singleCopyBytes = singleCopyBytes;
  const AlgorithmInfo* out = nullptr;
  CostContext ctx;  // the default machine model, 4 ranks with a core each
  ctx.host.localRanks = 4;
  ctx.host.cores = 4;
  Status s = SelectAlgorithm(a, f, ctx, &out);
  if (st) *st = s;
  return out;
}

TEST(AlgoSelection, DefaultsAndOverrides) {
  EXPECT_STREQ(Select("", CollKind::AllReduce, 2)->name, "direct");
  EXPECT_STREQ(Select("", CollKind::AllReduce, 1 << 20)->name, "ring");
  EXPECT_STREQ(Select("allreduce:direct", CollKind::AllReduce, 1 << 20)->name, "direct");
  EXPECT_STREQ(Select("allreduce:^direct;", CollKind::AllReduce, 2)->name, "twoshot");
  EXPECT_STREQ(Select("allreduce:^direct,twoshot,rdouble,rhalving,tree,dbtree", CollKind::AllReduce, 2)->name, "ring");
  EXPECT_STREQ(Select("ring", CollKind::AllReduce, 2)->name, "ring");
  // A global list naming no broadcast algorithm leaves broadcast alone.
  EXPECT_STREQ(Select("ring", CollKind::Broadcast, 2)->name, Select("", CollKind::Broadcast, 2)->name);
  Status st;
  EXPECT_EQ(Select("broadcast:^chain,tree,direct,staged", CollKind::Broadcast, 2, &st), nullptr);
  EXPECT_EQ(st.code(), tcclInvalidArgument);
}

// A call of `bytes` in 4-byte elements on `ranks` ranks.
CollArgs FloatCall(CollKind kind, int ranks, size_t bytes) {
  CollArgs a;
  a.kind = kind;
  a.nranks = ranks;
  a.count = bytes / 4;
  a.elemSize = 4;
  return a;
}

std::string Pick(const CollArgs& a, const CostContext& ctx, const AlgoFilter& f = AlgoFilter{}) {
  const AlgorithmInfo* out = nullptr;
  EXPECT_TRUE(SelectAlgorithm(a, f, ctx, &out).ok());
  return std::string(out ? out->name : "none");
}

// The algorithm automatic selection picks for `bytes` (of the call's count, 4-byte elements) on
// `ranks` ranks sharing `cores` cores, with shared scratch read in one copy from
// `sharedScratchBytes` (0: not shared).
std::string PickOnCores(CollKind kind, int ranks, int cores, size_t bytes, size_t sharedScratchBytes,
                        const AlgoFilter& f = AlgoFilter{}) {
  CollArgs a = FloatCall(kind, ranks, bytes);
  a.sharedScratchBytes = sharedScratchBytes;
  CostContext ctx;
  ctx.host.localRanks = ranks;
  ctx.host.cores = cores;
  return Pick(a, ctx, f);
}

// The staged broadcast (root stages pieces in shared scratch) pays off only when several ranks
// share each core and the scratch is read in one copy, and only from its minimum size on; forcing
// it works at any size.
TEST(AlgoSelection, StagedBroadcastWhenRanksShareCoresAndScratchIsShared) {
  const CollKind b = CollKind::Broadcast;
  EXPECT_EQ(PickOnCores(b, 8, 2, 64 << 20, 256 << 10), "staged");
  EXPECT_NE(PickOnCores(b, 8, 2, 64 << 20, 0), "staged");        // scratch not shared: two copies per reader
  EXPECT_NE(PickOnCores(b, 8, 8, 64 << 20, 256 << 10), "staged");  // a core each: the chain overlaps its copies
  EXPECT_NE(PickOnCores(b, 2, 2, 64 << 20, 256 << 10), "staged");
  EXPECT_EQ(PickOnCores(b, 8, 2, 1 << 20, 256 << 10), "staged");
  // Below its 256 KiB minimum, where pieces of 128 KiB would already be read in one copy.
  EXPECT_NE(PickOnCores(b, 8, 2, 128 << 10, 128 << 10), "staged");
  AlgoFilter forced;
  ASSERT_TRUE(ParseAlgoFilter("broadcast:staged", &forced).ok());
  EXPECT_EQ(PickOnCores(b, 8, 2, 1 << 10, 256 << 10, forced), "staged");
}

// With more ranks than cores, a schedule that spreads its copies evenly beats one with the same
// total and a busier rank: at 1 MiB on 8 ranks sharing 2 cores the chain (every rank copies the
// message twice) is chosen over the binomial tree (whose root copies it three times).
TEST(AlgoSelection, OversubscribedBroadcastPrefersEvenLoadOverBusyRoot) {
  const CollKind b = CollKind::Broadcast;
  AlgoFilter twoCopies;  // the staged broadcast aside: it copies least, so it wins from its minimum
  ASSERT_TRUE(ParseAlgoFilter("broadcast:^staged", &twoCopies).ok());
  EXPECT_EQ(PickOnCores(b, 8, 2, 1 << 20, 256 << 10, twoCopies), "chain");
  EXPECT_EQ(PickOnCores(b, 8, 2, 1 << 20, 256 << 10), "staged");  // N copies in all beat 2(N-1)
  EXPECT_EQ(PickOnCores(b, 8, 2, 64 << 20, 256 << 10), "staged");
}

// With more ranks than cores each ring message costs a hand-over shared among the cores
// (cost_model.cc): at 8 ranks on 2 cores the canonical tree (14 messages) beats the two-shot (112)
// from 16 KiB, unless the two-shot's blocks travel as lines (4 KiB: 512 B blocks) or the bytes
// decide (256 KiB); with a core per rank nothing changes.
TEST(AlgoSelection, OversubscribedAllReduceCountsRingMessages) {
  auto pick = [](size_t bytes, int cores, size_t lineMessageBytes) {
    CollArgs a;
    a.kind = CollKind::AllReduce;
    a.nranks = 8;
    a.count = bytes / 4;
    a.elemSize = 4;
    a.requireCanonical = true;
    a.lineMessageBytes = lineMessageBytes;
    CostContext ctx;
    ctx.host.localRanks = 8;
    ctx.host.cores = cores;
    const AlgorithmInfo* out = nullptr;
    EXPECT_TRUE(SelectAlgorithm(a, AlgoFilter{}, ctx, &out).ok());
    return std::string(out ? out->name : "none");
  };
  EXPECT_EQ(pick(32 << 10, 2, 1024), "tree");
  EXPECT_EQ(pick(16 << 10, 2, 1024), "tree");
  EXPECT_EQ(pick(4 << 10, 2, 1024), "twoshot");
  EXPECT_EQ(pick(4 << 10, 2, 0), "tree");  // every message counted
  EXPECT_EQ(pick(4 << 20, 2, 1024), "twoshot");  // out of cache (the default model's 32 MiB): the bytes decide
  EXPECT_EQ(pick(32 << 10, 8, 1024), "twoshot");
}

// Strict mode, ranks sharing cores, working set in cache: the canonical tree's root finishes alone
// on a core once the ranks that only pass a partial on are done (SharedCoresMakespan), so on the
// Xeon VM's measured model the tree wins the 8-rank all-reduce at 64-128 KiB and the 3-rank reduce,
// as forced runs there showed; out of cache, and in the run-to-run mode, the busiest rank keeps
// its ranks-per-core charge (the two-shot at 1 MiB).
TEST(AlgoSelection, CanonicalTreeFinishesOnTheCoresOthersLeave) {
  auto pick = [](CollKind kind, int ranks, size_t bytes, bool strict) {
    CollArgs a = FloatCall(kind, ranks, bytes);
    a.requireCanonical = strict;
    a.lineMessageBytes = 1024;
    CostContext ctx;
    EXPECT_TRUE(MachineModel::Parse("tccl-machine-model 3\nhop_us 0.16\nswitch_us 0.53\ncopy_cache_gbps 53.8\n"
                                    "copy_mem_gbps 6.9\nreduce_cache_gbps 35.7\nreduce_mem_gbps 5.1\n"
                                    "cache_bytes 2097152\ncores 2\nexchange_copies_gbps 9.9\nexchange_cma_gbps 27.7\n",
                                    &ctx.machine)
                    .ok());
    ctx.host.localRanks = ranks;
    ctx.host.cores = 2;
    return Pick(a, ctx);
  };
  EXPECT_EQ(pick(CollKind::AllReduce, 8, 64 << 10, true), "tree");
  EXPECT_EQ(pick(CollKind::AllReduce, 8, 128 << 10, true), "tree");
  EXPECT_EQ(pick(CollKind::AllReduce, 8, 1 << 20, true), "twoshot");  // out of cache
  EXPECT_EQ(pick(CollKind::Reduce, 3, 64 << 10, true), "tree");
  EXPECT_EQ(pick(CollKind::Reduce, 3, 1 << 20, true), "direct");  // out of cache
  EXPECT_EQ(pick(CollKind::Reduce, 4, 64 << 10, false), "chain");  // run mode: as before
}

// With a core per rank, a broadcast root pays about a hop per reader it posts to (forced on a
// 16-core Xeon, 8 ranks, 8 B: direct 1.45-2.23 us, binomial tree 0.76-0.81): small broadcasts
// take the tree there, while ranks sharing cores (where a hand-over is a context switch and the
// root posts all its sends in one time slice) keep the direct one. Messages read in one copy are
// not counted (SingleCopyPrefersDirectForLargeMessages).
TEST(AlgoSelection, BroadcastRootFanOutCountsWithACorePerRank) {
  const CollKind b = CollKind::Broadcast;
  for (size_t bytes : {(size_t)8, (size_t)512, (size_t)4096}) {
    EXPECT_EQ(PickOnCores(b, 8, 16, bytes, 0), "tree") << bytes;
    EXPECT_EQ(PickOnCores(b, 8, 8, bytes, 0), "tree") << bytes;
    EXPECT_EQ(PickOnCores(b, 4, 4, bytes, 0), "tree") << bytes;
    EXPECT_EQ(PickOnCores(b, 8, 2, bytes, 0), "direct") << bytes;
  }
  // The fan-out is counted on the schedule: the direct root's 7 sends, the tree root's 3.
  CollArgs a;
  a.kind = b;
  a.nranks = 8;
  a.count = 2;
  a.elemSize = 4;
  const AlgorithmInfo* direct = AlgorithmNamed(b, "direct");
  const AlgorithmInfo* tree = AlgorithmNamed(b, "tree");
  ASSERT_NE(direct, nullptr);
  ASSERT_NE(tree, nullptr);
  EXPECT_DOUBLE_EQ(ScheduleCost(*direct, a).sends, 7);
  EXPECT_DOUBLE_EQ(ScheduleCost(*tree, a).sends, 3);
}

// The staged all-gather likewise: every rank stages its own block, so N copies of each block
// instead of 2(N-1); with two ranks that is no saving and the ring stays. Sizes are per block.
TEST(AlgoSelection, StagedAllGatherWhenRanksShareCoresAndScratchIsShared) {
  const CollKind g = CollKind::AllGather;
  EXPECT_EQ(PickOnCores(g, 8, 2, 8 << 20, 256 << 10), "staged");
  EXPECT_EQ(PickOnCores(g, 4, 2, 8 << 20, 256 << 10), "staged");
  EXPECT_NE(PickOnCores(g, 8, 2, 8 << 20, 0), "staged");  // scratch not shared: two copies per reader
  EXPECT_NE(PickOnCores(g, 2, 2, 8 << 20, 256 << 10), "staged");
  EXPECT_NE(PickOnCores(g, 8, 2, 64 << 10, 256 << 10), "staged");  // blocks below the single-copy threshold
}

TEST(AlgoSelection, StrictModeUsesOnlyCanonicalAlgorithms) {
  EXPECT_STREQ(Select("", CollKind::AllReduce, 2, nullptr, true)->name, "direct");
  EXPECT_STREQ(Select("", CollKind::AllReduce, 1 << 20, nullptr, true)->name, "twoshot");
  EXPECT_STREQ(Select("", CollKind::ReduceScatter, 1 << 20, nullptr, true)->name, "direct");
  EXPECT_STREQ(Select("", CollKind::Reduce, 1 << 20, nullptr, true)->name, "tree");
  EXPECT_STREQ(Select("", CollKind::ReduceScatter, 1 << 20)->name, "rhalving");
  EXPECT_STREQ(Select("", CollKind::Reduce, 1 << 20)->name, "chain");
  // A global "ring" restricts all-reduce to ring, which strict mode refuses with an explanation.
  Status st;
  EXPECT_EQ(Select("ring", CollKind::AllReduce, 1 << 20, &st, true), nullptr);
  EXPECT_EQ(st.code(), tcclInvalidUsage);
  EXPECT_NE(st.message().find("TCCL_DETERMINISM=strict"), std::string::npos) << st.message();
  EXPECT_STREQ(Select("ring,twoshot", CollKind::AllReduce, 1 << 20, nullptr, true)->name, "twoshot");
}

// When peers read this call's buffers in one copy (single_copy.h), large messages favour the
// unsliced direct algorithms, whose whole blocks are read straight from the sender; without it
// (or below the threshold) the choice is the usual one.
TEST(AlgoSelection, SingleCopyPrefersDirectForLargeMessages) {
  const size_t big = 4 << 20, threshold = 256 << 10;
  EXPECT_STREQ(Select("", CollKind::Broadcast, big, nullptr, false, threshold)->name, "direct");
  EXPECT_STRNE(Select("", CollKind::Broadcast, big)->name, "direct");
  EXPECT_STREQ(Select("", CollKind::AllGather, big, nullptr, false, threshold)->name, "direct");
  EXPECT_STREQ(Select("", CollKind::AllToAll, big, nullptr, false, threshold)->name, "direct");
  EXPECT_STREQ(Select("", CollKind::Broadcast, 2, nullptr, false, threshold)->name, Select("", CollKind::Broadcast, 2)->name);
  // The cost model counts no copy for a sender whose messages are read by their receivers.
  CollArgs a;
  a.kind = CollKind::Broadcast;
  a.nranks = 4;
  a.count = big;
  a.elemSize = 4;
  const AlgorithmInfo* direct = AlgorithmNamed(CollKind::Broadcast, "direct");
  ASSERT_NE(direct, nullptr);
  // Priced out of place (ranks must agree, and in-place-ness is per rank).
  EXPECT_DOUBLE_EQ(ScheduleCost(*direct, a).copyBytes, 4.0 * big * 4);  // the root: 3 peers + its own copy
  a.singleCopyBytes = threshold;
  EXPECT_DOUBLE_EQ(ScheduleCost(*direct, a).copyBytes, 1.0 * big * 4);  // its own copy; receivers read once
}

// Read by CMA (a broadcast where BroadcastByCma holds), each message is a system call: the
// sliced chain's 8 messages of a 1 MiB broadcast cost more than direct's one; through a mapping
// the two price alike (and the chain, first in the table, stays).
TEST(AlgoSelection, BroadcastReadByCmaPrefersOneMessage) {
  CollArgs a;
  a.kind = CollKind::Broadcast;
  a.nranks = 2;
  a.count = (1 << 20) / 4;
  a.elemSize = 4;
  a.sliceElems = (128 << 10) / 4;
  a.singleCopyBytes = 32 << 10;
  CostContext ctx;
  ctx.host.localRanks = 2;
  ctx.host.cores = 2;
  const AlgorithmInfo* out = nullptr;
  ASSERT_TRUE(SelectAlgorithm(a, AlgoFilter(), ctx, &out).ok());
  EXPECT_STREQ(out->name, "chain");
  a.singleCopyByCma = true;
  ASSERT_TRUE(SelectAlgorithm(a, AlgoFilter(), ctx, &out).ok());
  EXPECT_STREQ(out->name, "direct");
  const AlgorithmInfo* chain = AlgorithmNamed(CollKind::Broadcast, "chain");
  ASSERT_NE(chain, nullptr);
  EXPECT_EQ(ScheduleCost(*chain, a).sends, 8);
}

// Every rank must pick the same algorithm, and in-place-ness is each rank's own (a broadcast's
// non-roots count as in place): the choice may not depend on it. (Found by tessera-perf: a
// broadcast root and non-root chose differently once local copies were priced.)
TEST(AlgoSelection, ChoiceDoesNotDependOnInPlace) {
  for (CollKind k : {CollKind::AllReduce, CollKind::ReduceScatter, CollKind::AllGather, CollKind::Broadcast,
                     CollKind::Reduce, CollKind::AllToAll})
    for (int n : {2, 3, 4, 8})
      for (size_t count = 1; count <= (64u << 20); count *= 8)
        for (size_t single : {(size_t)0, (size_t)256 << 10}) {
          CollArgs a;
          a.kind = k;
          a.nranks = n;
          a.count = count;
          a.singleCopyBytes = single;
          CostContext ctx;
          ctx.host.localRanks = n;
          ctx.host.cores = 2;
          const AlgorithmInfo *out = nullptr, *in = nullptr;
          ASSERT_TRUE(SelectAlgorithm(a, AlgoFilter(), ctx, &out).ok());
          a.inPlace = true;
          ASSERT_TRUE(SelectAlgorithm(a, AlgoFilter(), ctx, &in).ok());
          EXPECT_EQ(out, in) << CollName(k) << " N=" << n << " count=" << count << " single=" << single;
        }
}

TEST(AlgoSelection, EveryAlgorithmHasNameAndDescription) {
  std::set<std::pair<std::string, int>> seen;
  for (const AlgorithmInfo& a : AllAlgorithms()) {
    EXPECT_TRUE(a.name && *a.name);
    EXPECT_GT(strlen(a.description), 20u) << a.name;
    EXPECT_TRUE(seen.insert({a.name, (int)a.coll}).second) << "duplicate " << a.name;
  }
}

TEST(LauncherEnv, ReadsEachLauncher) {
  const char* all[] = {"RANK", "WORLD_SIZE", "LOCAL_RANK", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
                       "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "PMI_RANK",
                       "PMI_SIZE", "MASTER_ADDR", "MASTER_PORT"};
  EnvGuard env;
  for (const char* v : all) env.Set(v, nullptr);
  LaunchInfo li;
  EXPECT_EQ(ReadLauncherEnv(&li).code(), tcclInvalidUsage);

  env.Set("SLURM_PROCID", "3");
  env.Set("SLURM_NTASKS", "8");
  env.Set("SLURM_LOCALID", "1");
  ASSERT_TRUE(ReadLauncherEnv(&li).ok());
  EXPECT_EQ(li.launcher, "Slurm");
  EXPECT_EQ(li.rank, 3);
  EXPECT_EQ(li.size, 8);
  EXPECT_EQ(li.localRank, 1);

  env.Set("OMPI_COMM_WORLD_RANK", "2");
  env.Set("OMPI_COMM_WORLD_SIZE", "4");
  ASSERT_TRUE(ReadLauncherEnv(&li).ok());
  EXPECT_EQ(li.launcher, "Open MPI");  // Open MPI's own variables win over the allocation's

  env.Set("RANK", "1");
  env.Set("WORLD_SIZE", "2");
  env.Set("MASTER_ADDR", "127.0.0.1");
  env.Set("MASTER_PORT", "29500");
  ASSERT_TRUE(ReadLauncherEnv(&li).ok());
  EXPECT_EQ(li.launcher, "torchrun");
  EXPECT_EQ(li.masterPort, 29500);

  env.Set("WORLD_SIZE", "1");  // rank 1 of 1
  EXPECT_EQ(ReadLauncherEnv(&li).code(), tcclInvalidArgument);
  env.Set("WORLD_SIZE", "2");
  env.Set("MASTER_PORT", "http");
  EXPECT_EQ(ReadLauncherEnv(&li).code(), tcclInvalidArgument);
  // The last port leaves none for tccl's store (MASTER_PORT + 1) unless TCCL_BOOTSTRAP_PORT names one.
  env.Set("MASTER_PORT", "65535");
  EXPECT_EQ(ReadLauncherEnv(&li).code(), tcclInvalidArgument);
  env.Set("TCCL_BOOTSTRAP_PORT", "29600");
  EXPECT_TRUE(ReadLauncherEnv(&li).ok());
  env.Set("TCCL_BOOTSTRAP_PORT", nullptr);
  env.Set("MASTER_PORT", "65536");
  EXPECT_EQ(ReadLauncherEnv(&li).code(), tcclInvalidArgument);

  for (const char* v : all) env.Set(v, nullptr);
  env.Set("PMI_RANK", "0");
  env.Set("PMI_SIZE", "1");
  ASSERT_TRUE(ReadLauncherEnv(&li).ok());
  EXPECT_EQ(li.launcher, "PMI");
}

TEST(CommConfig, BadValuesAreRejectedAtInit) {
  EnvGuard env;
  tcclComm_t comm = nullptr;
  env.Set("TCCL_ALGO", "allreduce:fastest");
  EXPECT_EQ(tcclCommInitAll(&comm, 1, nullptr), tcclInvalidArgument);
  EXPECT_NE(std::string(tcclGetLastError(nullptr)).find("fastest"), std::string::npos);
  env.Set("TCCL_ALGO", nullptr);
  env.Set("TCCL_DETERMINISM", "sometimes");
  EXPECT_EQ(tcclCommInitAll(&comm, 1, nullptr), tcclInvalidArgument);
  env.Set("TCCL_DETERMINISM", nullptr);

  tcclUniqueId id;
  ASSERT_EQ(tcclSuccess, tcclGetUniqueId(&id));
  tcclConfig_t bad = TCCL_CONFIG_INITIALIZER;
  bad.magic = 0;
  EXPECT_EQ(tcclCommInitRankConfig(&comm, 1, id, 0, &bad), tcclInvalidArgument);
  tcclConfig_t cfg = TCCL_CONFIG_INITIALIZER;
  cfg.timeoutSec = -1;
  EXPECT_EQ(tcclCommInitRankConfig(&comm, 1, id, 0, &cfg), tcclInvalidArgument);
  cfg.timeoutSec = 30;
  cfg.determinism = 7;
  EXPECT_EQ(tcclCommInitRankConfig(&comm, 1, id, 0, &cfg), tcclInvalidArgument);
  cfg.determinism = tcclDeterminismRun;
  cfg.commName = "configured";
  ASSERT_EQ(tcclSuccess, tcclCommInitRankConfig(&comm, 1, id, 0, &cfg)) << tcclGetLastError(nullptr);
  EXPECT_EQ(tcclSuccess, tcclCommDestroy(comm));
}

}  // namespace
}  // namespace tccl
