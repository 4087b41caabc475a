#include "config/params.h"

#include <algorithm>
#include <csignal>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

namespace tccl {

// Bounds of the integer parameters' ranges: each says why where the type's own limit is not it.
constexpr int64_t kIntMax = INT32_MAX;     // read into an int
constexpr int64_t kInt64Max = INT64_MAX;
constexpr int64_t kGiB = int64_t(1) << 30;
constexpr int64_t kTiB = int64_t(1) << 40;
constexpr int64_t kMi = int64_t(1) << 20;
constexpr int64_t kLastSignal = NSIG - 1;  // signal numbers run 1 .. NSIG - 1

// The registry. Defaults carry their reasoning in the description so no constant is unexplained;
// after an Int's description, its accepted range.
static const ParamInfo kParams[] = {
    {"DEBUG", ParamType::String, "WARN", "Log level: NONE, WARN, INFO or TRACE."},
    {"DEBUG_SUBSYS", ParamType::String, "ALL",
     "Comma list of subsystems to log: INIT, COLL, NET, SHM, BOOT, TUNING, ALL; ^ excludes."},
    {"DEBUG_FILE", ParamType::String, "",
     "Write logs to this file instead of stderr; %h expands to the host name, %p to the pid."},
    {"CONF_FILE", ParamType::String, "",
     "Config file of NAME=value lines read before the environment (default ~/.tccl.conf)."},
    {"TIMEOUT", ParamType::Int, "600",
     "Deadline in seconds for every blocking step (bootstrap, connect, each collective). 600 s "
     "matches the default watchdog of PyTorch process groups, long enough for slow job starts.",
     1, kIntMax},  // as tcclConfig_t.timeoutSec, an int
    {"DETERMINISM", ParamType::String, "strict",
     "Determinism level: strict (canonical order) or run (same bits run to run)."},
    {"CUDA_DEVICE", ParamType::Int, "-1",
     "Memory domain of new communicators whose config leaves cudaDevice undefined: -1 host memory, "
     "-2 the calling thread's current CUDA device, N device N (docs/gpu.md).",
     -2, kIntMax},  // an int ordinal
    {"CUDA_AREA_BYTES", ParamType::Int, "33554432",
     "Bytes of each of the two device areas per rank of a CUDA communicator (the IPC window; the "
     "pinned staging buffers across hosts). A round moves at most this much per rank; 32 MiB keeps "
     "the barriers of a round (~15 us with MPS) under 10% of the round at H100 memory bandwidth.",
     4096, kInt64Max},  // a page; above that the allocation itself says whether it fits
    {"ALGO", ParamType::String, "",
     "Algorithm override, NCCL grammar: 'ring;allreduce:ring', '^' excludes. Empty: automatic."},
    {"CHUNK_BYTES", ParamType::Int, "131072",
     "Pipelining slice in bytes. 128 KiB keeps a slice and its partner (two buffers per step) "
     "well inside a 512 KiB L2 while amortising per-step overhead (~1 us) to <2% at 10 GB/s. "
     "The direct algorithms, whose steps move a slice to or from each of N-1 peers, use "
     "min(this, 2x this / (N-1)), keeping a step's slices within four of these (docs/performance.md).",
     64, kGiB},  // a cache line; 1 GiB keeps N slices' scratch arithmetic far from overflow
    {"SHM_RING_BYTES", ParamType::Int, "1048576",
     "Bytes of each directed shared-memory channel. Must hold several slices so a sender runs "
     "ahead of its receiver; 1 MiB = 8 default slices. A host's L ranks keep L*(L-1) of them in "
     "/dev/shm: 57 MiB at 8 ranks, inside a container's default 64 MiB.",
     4096, kGiB},  // a page; each of N*(N-1) rings lives in one shared segment
    {"SHM_RING_RESTART", ParamType::Int, "-1",
     "Whether a message that finds its shared-memory ring empty may start over at the ring's start "
     "(its hot lines then two messages' worth, not the whole ring): -1 where the rings an operation "
     "writes outgrow a quarter of the last-level cache, 0 never, 1 always (docs/performance.md, "
     "\"Rings that start over\").",
     -1, 1},
    {"CACHE_BYTES", ParamType::Int, "0",
     "Bytes of the last-level cache that the rules depending on it assume (stores past the cache, "
     "ring restarts, the all-to-all's copy path); 0: read from sysfs (cpu0's highest data cache "
     "level), else sysconf's L3 (CPUID). Set it where the machine reports another size than its "
     "ranks share (a VM may show the host's or its package's cache, or a slice of it; tccl-info -t "
     "prints the size assumed and its source); read once per process.",
     0, kTiB},  // above any cache built; keeps products with rank counts in 64 bits
    {"SHM_DISABLE", ParamType::Bool, "0", "Use TCP even between ranks on the same host."},
    {"SHM_SINGLE_COPY_BYTES", ParamType::Int, "262144",
     "Shared-memory messages from this size on are read by the receiver straight from the sender's "
     "buffer when it can (ranks as threads; tcclMemAlloc buffers; an all-to-all's blocks via CMA "
     "where its rule holds) instead of through the ring; 0 = never. 256 KiB: above the 128 KiB pipelining slice, "
     "so ring-sliced algorithms keep their in-cache two-copy pipeline; the direct ones (two-shot, "
     "direct reduce-scatter and reduce) cut slices of this size where the call's buffers are read "
     "in one copy (docs/single_copy.md). On a host "
     "whose pairs' rings outgrow the last-level cache, from the smaller of this and 128 KiB.",
     0, kInt64Max},
    {"SPIN_US", ParamType::Int, "20",
     "Microseconds a waiting rank polls before it yields and then sleeps; about the cost of "
     "two context switches, so spinning longer never beats handing the core over.",
     0, kIntMax},  // the waiter keeps microseconds in an int
    {"YIELD_US", ParamType::Int, "1000",
     "Microseconds a waiting rank yields its core before it sleeps on a futex or poll. Yielding "
     "keeps hand-over latency at ~1 us when ranks outnumber cores; 1 ms covers several scheduler "
     "slices of the other ranks, and a rank idle longer than that sleeps.",
     0, kIntMax},  // the waiter keeps microseconds in an int
    {"TUNING_FILE", ParamType::String, "",
     "Cache file of the measured machine model (copy and reduce bandwidth, hand-over latency, the "
     "pair exchange's rates through staging and by CMA) that algorithm selection uses; default "
     "~/.cache/tccl/machine-<cpu hash>.txt, written on first use (a file of an older version, or "
     "removed, is measured again); 'none' measures once per process and keeps nothing."},
    {"HOST_ID", ParamType::String, "",
     "Override the host identity (ranks with equal ids use shared memory); for tests."},
    {"BOOTSTRAP_PORT", ParamType::Int, "0",
     "Port of the bootstrap store for tcclCommInitFromEnv; 0: MASTER_PORT + 1 (MASTER_PORT itself "
     "is torchrun's own store).",
     0, 65535},
    {"BOOTSTRAP_SECRET", ParamType::String, "",
     "Secret shared by all ranks for tcclCommInitFromEnv (tessera-run sets a random one)."},
    {"SOCKET_ADDR", ParamType::String, "",
     "Local IPv4 address TCP connections listen on; default: the address that reaches the "
     "bootstrap root."},
    {"FLIGHT_RECORDER_ENTRIES", ParamType::Int, "128",
     "Operations each communicator remembers for its flight recorder (dumped on error, on "
     "tcclCommDumpFlightRecorder and on TCCL_FLIGHT_RECORDER_SIGNAL); 0 turns it off.",
     0, kMi},  // a million operations: the dump of more is never read
    {"FLIGHT_RECORDER_SIGNAL", ParamType::Int, "0",
     "Signal number (e.g. 10 for SIGUSR1) on which every communicator of the process dumps its "
     "flight recorder to the log; 0: no handler is installed.",
     0, kLastSignal},
};

// The words a String parameter with a fixed vocabulary takes, in any case (NCCL compares its
// NCCL_DEBUG and NCCL_DEBUG_SUBSYS so). A `list` takes a comma list of them, optionally after a
// '^' that excludes what it names; an empty list means every word.
struct Vocabulary {
  const char* param;
  const char* words;
  bool list;
};
static const Vocabulary kVocabularies[] = {
    {"DEBUG", "NONE,WARN,INFO,TRACE", false},
    {"DEBUG_SUBSYS", "INIT,COLL,NET,SHM,BOOT,TUNING,ALL", true},
    {"DETERMINISM", "strict,run", false},
};

namespace {

struct Registry {
  std::mutex mu;
  bool loaded = false;
  std::vector<ParamValue> values;
  std::string fileProblem;  // what could not be read or parsed in the config file, or ""
};

// Never destroyed: the bootstrap store's exit handler reads TCCL_TIMEOUT and library threads may
// still read parameters while the process exits. A function-local static built after that handler
// was registered (atexit) would be destroyed before it ran, and its lookup read freed memory
// (a crash at exit, seen in one of seven runs of a store test; ASan found it in every run).
Registry& Reg() {
  static Registry* r = new Registry;
  return *r;
}

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

const ParamInfo* Find(const std::string& name) {
  for (const ParamInfo& p : kParams)
    if (name == p.name) return &p;
  return nullptr;
}

void LoadLocked(Registry& r) {
  r.values.clear();
  std::map<std::string, std::pair<std::string, std::string>> fromFile;
  std::string path;
  if (const char* e = getenv("TCCL_CONF_FILE")) path = e;
  if (path.empty()) {
    if (const char* home = getenv("HOME")) path = std::string(home) + "/.tccl.conf";
  }
  r.fileProblem.clear();
  errno = 0;
  std::ifstream in(path);
  if (in) {
    std::stringstream ss;
    ss << in.rdbuf();
    std::vector<std::pair<std::string, std::string>> kv;
    std::string err = ParseConfText(ss.str(), &kv);
    if (!err.empty()) {
      r.fileProblem = "config file " + path + ": " + err;
      fprintf(stderr, "TCCL WARN %s; its lines from there on are not read\n", r.fileProblem.c_str());
    }
    for (auto& [k, v] : kv) fromFile[k] = {v, "config file " + path};
  } else if (getenv("TCCL_CONF_FILE") && *getenv("TCCL_CONF_FILE")) {
    // ~/.tccl.conf is optional; a file named explicitly is not.
    r.fileProblem = "TCCL_CONF_FILE='" + path + "' (environment) cannot be read: " + (errno ? strerror(errno) : "open failed");
  }
  for (const ParamInfo& p : kParams) {
    ParamValue v{&p, p.defaultValue, "default"};
    auto it = fromFile.find(p.name);
    if (it != fromFile.end()) {
      v.value = it->second.first;
      v.source = it->second.second;
    }
    std::string env = std::string("TCCL_") + p.name;
    if (const char* e = getenv(env.c_str())) {
      v.value = e;
      v.source = "environment";
    }
    r.values.push_back(v);
  }
  r.loaded = true;
}

const ParamValue* Lookup(const char* name) {
  Registry& r = Reg();
  std::lock_guard<std::mutex> g(r.mu);
  if (!r.loaded) LoadLocked(r);
  for (const ParamValue& v : r.values)
    if (strcmp(v.info->name, name) == 0) return &v;  // values never move after load
  fprintf(stderr, "TCCL WARN internal: parameter %s is not in the registry\n", name);
  return nullptr;
}

// Case-insensitive words a Bool accepts.
bool ParseBool(const std::string& text, bool* out) {
  std::string t;
  for (char c : text) t += (char)tolower((unsigned char)c);
  if (t == "1" || t == "true" || t == "yes" || t == "on") *out = true;
  else if (t == "0" || t == "false" || t == "no" || t == "off") *out = false;
  else return false;
  return true;
}

std::string Upper(std::string s) {
  for (char& c : s) c = (char)toupper((unsigned char)c);
  return s;
}

// The word of the comma-separated `words` that `value` is (any case, spaces around it ignored),
// spelled as in `words`; "" when it is none of them.
std::string WordOf(const std::string& value, const char* words) {
  const std::string v = Upper(Trim(value));
  if (v.empty() || v.find(',') != std::string::npos) return "";
  const std::string w = words;
  const size_t at = ("," + Upper(w) + ",").find("," + v + ",");
  return at == std::string::npos ? "" : w.substr(at, v.size());
}

bool IsOneOf(const std::string& value, const char* words) { return !WordOf(value, words).empty(); }

// The vocabulary of String parameter `name`, or null where it takes any text.
const Vocabulary* VocabularyOf(const char* name) {
  for (const Vocabulary& voc : kVocabularies)
    if (strcmp(voc.param, name) == 0) return &voc;
  return nullptr;
}

// The items of a list value (a comma list after an optional '^', which sets *exclude), trimmed;
// none for an empty list.
std::vector<std::string> ListItems(const std::string& value, bool* exclude) {
  std::string rest = Trim(value);
  *exclude = !rest.empty() && rest[0] == '^';
  if (*exclude) rest = rest.substr(1);
  std::vector<std::string> items;
  if (Trim(rest).empty()) return items;
  for (size_t pos = 0; pos <= rest.size();) {
    const size_t comma = std::min(rest.find(',', pos), rest.size());
    items.push_back(Trim(rest.substr(pos, comma - pos)));
    pos = comma + 1;
  }
  return items;
}

// What is wrong with a String of a fixed vocabulary, or "".
std::string VocabularyProblem(const std::string& value, const Vocabulary& voc) {
  if (!voc.list) return IsOneOf(value, voc.words) ? "" : std::string("is not one of ") + voc.words;
  bool exclude = false;
  for (const std::string& item : ListItems(value, &exclude))
    if (!IsOneOf(item, voc.words)) return "names '" + item + "', not one of " + voc.words;
  return "";
}

// What is wrong with a parameter's value for its type, as a sentence; "" when nothing is.
std::string Problem(const ParamValue& v) {
  const ParamInfo& p = *v.info;
  const std::string at = "TCCL_" + std::string(p.name) + "='" + v.value + "' (" + v.source + ")";
  if (p.type == ParamType::String) {
    const Vocabulary* voc = VocabularyOf(p.name);
    const std::string problem = voc ? VocabularyProblem(v.value, *voc) : "";
    return problem.empty() ? "" : at + " " + problem;
  }
  if (p.type == ParamType::Bool) {
    bool b;
    return ParseBool(v.value, &b) ? "" : at + " is not a boolean: " + ParamAccepted(p);
  }
  const char* text = v.value.c_str();
  char* end = nullptr;
  errno = 0;
  const long long x = strtoll(text, &end, 0);
  const std::string range = ParamAccepted(p);
  if (end == text || *end != '\0' || errno == ERANGE) return at + " is not an integer in " + range;
  if (x < p.minValue || x > p.maxValue) return at + " is outside " + range;
  return "";
}

}  // namespace

std::string ParseConfText(const std::string& text,
                          std::vector<std::pair<std::string, std::string>>* out) {
  std::istringstream in(text);
  std::string line;
  int lineNo = 0;
  while (std::getline(in, line)) {
    ++lineNo;
    std::string t = Trim(line);
    if (t.empty() || t[0] == '#') continue;
    size_t eq = t.find('=');
    if (eq == std::string::npos)
      return "line " + std::to_string(lineNo) + ": expected NAME=value";
    std::string name = Trim(t.substr(0, eq));
    if (name.rfind("TCCL_", 0) == 0) name = name.substr(5);
    if (!Find(name)) return "line " + std::to_string(lineNo) + ": unknown parameter '" + name + "'";
    out->emplace_back(name, Trim(t.substr(eq + 1)));
  }
  return "";
}

std::vector<ParamValue> AllParams() {
  Registry& r = Reg();
  std::lock_guard<std::mutex> g(r.mu);
  if (!r.loaded) LoadLocked(r);
  return r.values;
}

void ReloadParams() {
  Registry& r = Reg();
  std::lock_guard<std::mutex> g(r.mu);
  LoadLocked(r);
}

int64_t ParamInt(const char* name) {
  const ParamValue* v = Lookup(name);
  if (!v) return 0;
  const std::string problem = Problem(*v);
  if (!problem.empty()) {
    fprintf(stderr, "TCCL WARN %s; using the default %s\n", problem.c_str(), v->info->defaultValue);
    return strtoll(v->info->defaultValue, nullptr, 0);
  }
  return strtoll(v->value.c_str(), nullptr, 0);
}

std::string ParamString(const char* name) {
  const ParamValue* v = Lookup(name);
  if (!v) return std::string();
  const Vocabulary* voc = VocabularyOf(name);
  if (!voc || !VocabularyProblem(v->value, *voc).empty()) return v->value;
  // A word of a vocabulary as the vocabulary spells it, so readers compare without folding case.
  if (!voc->list) return WordOf(v->value, voc->words);
  bool exclude = false;
  std::string out;
  for (const std::string& item : ListItems(v->value, &exclude))
    out += (out.empty() ? "" : ",") + WordOf(item, voc->words);
  return (exclude ? "^" : "") + out;
}

bool ParamBool(const char* name) {
  const ParamValue* v = Lookup(name);
  if (!v) return false;
  bool b = false;
  if (!ParseBool(v->value, &b)) {
    fprintf(stderr, "TCCL WARN %s; using the default %s\n", Problem(*v).c_str(), v->info->defaultValue);
    ParseBool(v->info->defaultValue, &b);
  }
  return b;
}

std::string ParamAccepted(const ParamInfo& p) {
  if (p.type == ParamType::Int) return std::to_string(p.minValue) + " .. " + std::to_string(p.maxValue);
  if (p.type == ParamType::Bool) return "0/1, true/false, yes/no, on/off";
  const Vocabulary* voc = VocabularyOf(p.name);
  if (!voc) return "text";
  return std::string(voc->list ? "comma list of " : "one of ") + voc->words + (voc->list ? ", ^ excludes" : "") +
         " (any case)";
}

std::string CheckParamValues() {
  {
    Registry& r = Reg();
    std::lock_guard<std::mutex> g(r.mu);
    if (!r.loaded) LoadLocked(r);
    if (!r.fileProblem.empty()) return r.fileProblem;
  }
  for (const ParamValue& v : AllParams()) {
    std::string problem = Problem(v);
    if (!problem.empty()) return problem;
  }
  return "";
}

}  // namespace tccl
