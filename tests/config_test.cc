// Configuration: the parameter registry and its sources, the config file parser, the TCCL_ALGO
// grammar and selection, launcher environment parsing, and docs/env.md kept in step.
#include <gtest/gtest.h>
#include <unistd.h>

#include <climits>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <tuple>

#include "algorithms/registry.h"
#include "tuning/cost_model.h"
#include "bootstrap/launcher_env.h"
#include "config/params.h"
#include "core/log.h"

namespace tccl {
namespace {

class EnvGuard {
 public:
  ~EnvGuard() {
    for (auto& [k, v] : saved_) {
      if (v.first) setenv(k.c_str(), v.second.c_str(), 1);
      else unsetenv(k.c_str());
    }
    ReloadParams();
  }
  void Set(const std::string& k, const char* v) {
    if (!saved_.count(k)) {
      const char* old = getenv(k.c_str());
      saved_[k] = {old != nullptr, old ? old : ""};
    }
    if (v) setenv(k.c_str(), v, 1);
    else unsetenv(k.c_str());
    ReloadParams();
  }

 private:
  std::map<std::string, std::pair<bool, std::string>> saved_;
};

const ParamValue* Find(const std::vector<ParamValue>& all, const std::string& name) {
  for (const ParamValue& p : all)
    if (name == p.info->name) return &p;
  return nullptr;
}

TEST(Params, DefaultFileEnvironmentPrecedence) {
  EnvGuard env;
  char path[] = "/tmp/tccl-conf-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  const char text[] = "# comment\nTCCL_TIMEOUT = 42\nCHUNK_BYTES=4096\n";
  ASSERT_EQ((ssize_t)sizeof(text) - 1, write(fd, text, sizeof(text) - 1));
  close(fd);
  env.Set("TCCL_CONF_FILE", path);
  env.Set("TCCL_CHUNK_BYTES", "8192");
  env.Set("TCCL_SPIN_US", nullptr);
  auto all = AllParams();
  EXPECT_EQ(Find(all, "TIMEOUT")->value, "42");
  EXPECT_EQ(Find(all, "TIMEOUT")->source, std::string("config file ") + path);
  EXPECT_EQ(Find(all, "CHUNK_BYTES")->value, "8192");
  EXPECT_EQ(Find(all, "CHUNK_BYTES")->source, "environment");
  EXPECT_EQ(Find(all, "SPIN_US")->source, "default");
  EXPECT_EQ(ParamInt("TIMEOUT"), 42);
  unlink(path);
}

TEST(Params, ConfigFileErrorsAreReported) {
  std::vector<std::pair<std::string, std::string>> kv;
  EXPECT_NE(ParseConfText("TIMEOUT 5\n", &kv), "");
  EXPECT_NE(ParseConfText("NO_SUCH_PARAM=1\n", &kv).find("unknown parameter"), std::string::npos);
  kv.clear();
  EXPECT_EQ(ParseConfText("\n  # only comments\nTCCL_DEBUG=INFO\n", &kv), "");
  ASSERT_EQ(kv.size(), 1u);
  EXPECT_EQ(kv[0].first, "DEBUG");
  EXPECT_EQ(kv[0].second, "INFO");
}

TEST(Params, NonIntegerFallsBackToDefault) {
  EnvGuard env;
  env.Set("TCCL_SPIN_US", "fast");
  EXPECT_EQ(ParamInt("SPIN_US"), 20);
  EXPECT_NE(CheckParamValues().find("TCCL_SPIN_US='fast' (environment) is not an integer"), std::string::npos)
      << CheckParamValues();
}

// Every integer's default lies in its declared range, and the range is not empty or inverted; a
// new parameter declared without a range (0 .. 0) fails here unless 0 is all it may be.
TEST(Params, EveryDefaultIsAValueItsTypeAccepts) {
  EnvGuard env;
  for (const ParamValue& p : AllParams()) env.Set(std::string("TCCL_") + p.info->name, nullptr);
  EXPECT_EQ(CheckParamValues(), "");
  for (const ParamValue& p : AllParams()) {
    if (p.info->type != ParamType::Int) continue;
    SCOPED_TRACE(p.info->name);
    EXPECT_LT(p.info->minValue, p.info->maxValue);
    EXPECT_EQ(ParamInt(p.info->name), strtoll(p.info->defaultValue, nullptr, 0));
  }
}

// Each integer at its range's ends is accepted and read back; one past either end, or text, is
// named with its value, source and range, and reads as the default.
TEST(Params, IntegersOutsideTheirRangesAreNamed) {
  EnvGuard env;
  for (const ParamValue& p : AllParams()) {
    if (p.info->type != ParamType::Int) continue;
    const std::string name = p.info->name, var = "TCCL_" + name;
    const int64_t lo = p.info->minValue, hi = p.info->maxValue, def = strtoll(p.info->defaultValue, nullptr, 0);
    SCOPED_TRACE(name);
    for (int64_t ok : {lo, hi}) {
      env.Set(var, std::to_string(ok).c_str());
      EXPECT_EQ(CheckParamValues(), "");
      EXPECT_EQ(ParamInt(name.c_str()), ok);
    }
    std::vector<std::string> bad = {"12x", ""};
    if (lo > INT64_MIN) bad.push_back(std::to_string(lo - 1));
    if (hi < INT64_MAX) bad.push_back(std::to_string(hi + 1));
    for (const std::string& v : bad) {
      env.Set(var, v.c_str());
      const std::string problem = CheckParamValues();
      EXPECT_EQ(problem.find(var + "='" + v + "' (environment) is "), 0u) << problem;
      EXPECT_NE(problem.find(std::to_string(lo) + " .. " + std::to_string(hi)), std::string::npos) << problem;
      EXPECT_EQ(ParamInt(name.c_str()), def);
    }
    env.Set(var, nullptr);
  }
}

// The words of TCCL_DEBUG, TCCL_DEBUG_SUBSYS and TCCL_DETERMINISM in any case; anything else named.
TEST(Params, VocabulariesTakeTheirWordsInAnyCase) {
  EnvGuard env;
  const std::vector<std::pair<const char*, std::vector<const char*>>> good = {
      {"TCCL_DEBUG", {"info", "Trace", "NONE", " warn "}},
      {"TCCL_DEBUG_SUBSYS", {"", "ALL", "^init, Coll", "net,SHM,boot,tuning"}},
      {"TCCL_DETERMINISM", {"strict", "RUN"}}};
  for (const auto& [var, values] : good) {
    for (const char* v : values) {
      env.Set(var, v);
      EXPECT_EQ(CheckParamValues(), "") << var << "=" << v;
    }
    env.Set(var, nullptr);
  }
  const std::vector<std::tuple<const char*, const char*, const char*>> bad = {
      {"TCCL_DEBUG", "verbose", "TCCL_DEBUG='verbose' (environment) is not one of NONE,WARN,INFO,TRACE"},
      {"TCCL_DEBUG", "INFO,WARN", "is not one of"},
      {"TCCL_DEBUG_SUBSYS", "INIT,FOO", "TCCL_DEBUG_SUBSYS='INIT,FOO' (environment) names 'FOO', not one of"},
      {"TCCL_DEBUG_SUBSYS", "INIT,,COLL", "names '', not one of"},
      {"TCCL_DETERMINISM", "fast", "TCCL_DETERMINISM='fast' (environment) is not one of strict,run"}};
  for (const auto& [var, v, words] : bad) {
    env.Set(var, v);
    EXPECT_NE(CheckParamValues().find(words), std::string::npos) << CheckParamValues();
    env.Set(var, nullptr);
  }
}

// The log takes the same words in any case: TCCL_DEBUG=info turns INFO on, as NCCL_DEBUG=info does.
TEST(Params, LogTakesItsWordsInAnyCase) {
  {
    EnvGuard env;
    env.Set("TCCL_DEBUG", "info");
    env.Set("TCCL_DEBUG_SUBSYS", " tuning,Coll ");
    ReloadLogConfig();
    EXPECT_TRUE(LogEnabled(LogLevel::Info, kLogTuning));
    EXPECT_TRUE(LogEnabled(LogLevel::Info, kLogColl));
    EXPECT_FALSE(LogEnabled(LogLevel::Info, kLogShm));
    EXPECT_FALSE(LogEnabled(LogLevel::Trace, kLogTuning));
    env.Set("TCCL_DEBUG_SUBSYS", "^Shm");
    ReloadLogConfig();
    EXPECT_TRUE(LogEnabled(LogLevel::Info, kLogTuning));
    EXPECT_FALSE(LogEnabled(LogLevel::Info, kLogShm));
  }
  ReloadLogConfig();  // back to the environment the guard restored
}

// A config file line that cannot be read, or a TCCL_CONF_FILE that cannot be opened, is reported;
// a missing ~/.tccl.conf is not.
TEST(Params, ConfigFileProblemsAreReported) {
  EnvGuard env;
  char dir[] = "/tmp/tccl-home-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  env.Set("HOME", dir);
  env.Set("TCCL_CONF_FILE", nullptr);
  EXPECT_EQ(CheckParamValues(), "");
  const std::string missing = std::string(dir) + "/absent.conf";
  env.Set("TCCL_CONF_FILE", missing.c_str());
  EXPECT_EQ(CheckParamValues(), "TCCL_CONF_FILE='" + missing + "' (environment) cannot be read: No such file or directory");
  const std::string bad = std::string(dir) + "/bad.conf";
  std::ofstream(bad) << "TIMEOUT=5\nTIMOUT=6\n";
  env.Set("TCCL_CONF_FILE", bad.c_str());
  EXPECT_EQ(CheckParamValues(), "config file " + bad + ": line 2: unknown parameter 'TIMOUT'");
  std::ofstream(bad) << "TIMEOUT=0\n";
  ReloadParams();
  EXPECT_EQ(CheckParamValues(), "TCCL_TIMEOUT='0' (config file " + bad + ") is outside 1 .. 2147483647");
  unlink(bad.c_str());
  rmdir(dir);
}

TEST(Params, BooleansTakeTheUsualWordsInAnyCase) {
  EnvGuard env;
  for (const char* yes : {"1", "true", "Yes", "ON"}) {
    env.Set("TCCL_SHM_DISABLE", yes);
    EXPECT_TRUE(ParamBool("SHM_DISABLE")) << yes;
    EXPECT_EQ(CheckParamValues(), "");
  }
  for (const char* no : {"0", "False", "no", "off"}) {
    env.Set("TCCL_SHM_DISABLE", no);
    EXPECT_FALSE(ParamBool("SHM_DISABLE")) << no;
    EXPECT_EQ(CheckParamValues(), "");
  }
  env.Set("TCCL_SHM_DISABLE", "ture");
  EXPECT_FALSE(ParamBool("SHM_DISABLE"));  // the default
  EXPECT_NE(CheckParamValues().find("TCCL_SHM_DISABLE='ture' (environment) is not a boolean"), std::string::npos)
      << CheckParamValues();
}

// docs/env.md documents exactly the parameters of the registry, with the same defaults.
TEST(ConfigDocs, EnvMdListsExactlyTheRegistry) {
  std::ifstream in(std::string(TCCL_SOURCE_DIR) + "/docs/env.md");
  ASSERT_TRUE(in) << "docs/env.md is missing";
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  // name | type | `default` | accepted | meaning
  std::regex row(R"(\| `TCCL_(\w+)` \| \w+ \| `([^`]*)` \| ([^|]*) \|)");
  std::map<std::string, std::string> documented;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), row); it != std::sregex_iterator(); ++it)
    documented[(*it)[1]] = std::string((*it)[2]) + " " + std::string((*it)[3]);
  std::map<std::string, std::string> registry;
  for (const ParamValue& p : AllParams()) registry[p.info->name] = std::string(p.info->defaultValue) + " " + ParamAccepted(*p.info);
  EXPECT_EQ(documented, registry);
}

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

// The table's entry for `name` of collective `k` (nullptr if there is none).
const AlgorithmInfo* AlgorithmNamed(CollKind k, const std::string& name) {
  for (const AlgorithmInfo& alg : AllAlgorithms())
    if (alg.coll == k && name == alg.name) return &alg;
  return nullptr;
}

// The algorithm automatic selection picks for `bytes` (of the call's count, 4-byte elements) on
// `ranks` ranks sharing `cores` cores, with shared scratch read in one copy from
// `sharedScratchBytes` (0: not shared).
std::string PickOnCores(CollKind kind, int ranks, int cores, size_t bytes, size_t sharedScratchBytes,
                        const AlgoFilter& f = AlgoFilter{}) {
  CollArgs a;
  a.kind = kind;
  a.nranks = ranks;
  a.count = bytes / 4;
  a.elemSize = 4;
  a.sharedScratchBytes = sharedScratchBytes;
  CostContext ctx;
  ctx.host.localRanks = ranks;
  ctx.host.cores = cores;
  const AlgorithmInfo* out = nullptr;
  EXPECT_TRUE(SelectAlgorithm(a, f, ctx, &out).ok());
  return std::string(out ? out->name : "none");
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
