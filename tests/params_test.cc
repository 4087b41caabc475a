// The parameter registry: values from the default, the config file and the environment; what each
// type accepts and how a value it does not accept is reported; docs/env.md kept in step.
#include <gtest/gtest.h>
#include <unistd.h>

#include <climits>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <tuple>

#include "config/params.h"
#include "core/log.h"
#include "tests/support/scoped_env.h"

namespace tccl {
namespace {

using tccl_test::EnvGuard;

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

// The registry's words for TCCL_DEBUG_SUBSYS (what creation accepts) and the log's subsystems
// (core/log.cc) are two lists: every word the registry accepts must select exactly one of the log's
// subsystems (ALL: every one), and every subsystem must have a word. A word added to one list only
// would be accepted and select nothing (an empty selection logs everything), or leave a subsystem
// no user can name.
TEST(Params, EveryLogSubsystemWordSelectsOneSubsystem) {
  std::string accepted;
  for (const ParamValue& v : AllParams())
    if (std::string(v.info->name) == "DEBUG_SUBSYS") accepted = ParamAccepted(*v.info);
  const std::string head = "comma list of ", tail = ", ^ excludes";
  ASSERT_EQ(accepted.rfind(head, 0), 0u) << accepted;
  const std::string list = accepted.substr(head.size(), accepted.find(tail) - head.size());
  const unsigned subsystems[] = {kLogInit, kLogColl, kLogNet, kLogShm, kLogBoot, kLogTuning};
  const unsigned every = kLogInit | kLogColl | kLogNet | kLogShm | kLogBoot | kLogTuning;
  unsigned covered = 0;
  size_t words = 0;
  {
    EnvGuard env;
    env.Set("TCCL_DEBUG", "INFO");
    std::stringstream ss(list);
    for (std::string word; std::getline(ss, word, ',');) {
      ++words;
      env.Set("TCCL_DEBUG_SUBSYS", word.c_str());
      ReloadLogConfig();
      unsigned selected = 0;
      for (unsigned s : subsystems)
        if (LogEnabled(LogLevel::Info, s)) selected |= s;
      if (word == "ALL") {
        EXPECT_EQ(selected, every);
        continue;
      }
      EXPECT_EQ(__builtin_popcount(selected), 1) << word << " selects " << selected;
      EXPECT_TRUE(LogSubsysNamed(selected)) << word;
      covered |= selected;
    }
  }
  ReloadLogConfig();  // back to the environment the guard restored
  EXPECT_EQ(words, 7u) << list;
  EXPECT_EQ(covered, every) << list;
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

}  // namespace
}  // namespace tccl
