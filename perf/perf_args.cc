#include "perf/perf_args.h"

#include <cstdlib>
#include <cstring>
#include <utility>

namespace perf {

namespace {

const char* kTypes[] = {"int8", "uint8", "int32", "uint32", "int64", "uint64", "half", "float", "double", "bfloat16"};
const char* kOps[] = {"sum", "prod", "max", "min", "avg"};

bool ParseSize(const char* s, size_t* out) {
  char* end = nullptr;
  double v = strtod(s, &end);
  if (end == s || v < 0) return false;
  switch (*end) {
    case 'K': case 'k': v *= 1024; ++end; break;
    case 'M': case 'm': v *= 1024 * 1024; ++end; break;
    case 'G': case 'g': v *= 1024.0 * 1024 * 1024; ++end; break;
    default: break;
  }
  if (*end == 'B' || *end == 'b') ++end;
  if (*end) return false;
  *out = (size_t)v;
  return true;
}

// A -d or -o value: one name, "all", or a comma-separated list of them ("float,half"), in the
// order given (nccl-tests takes one name or "all"; a list lets one run, one job start-up, check
// several types, which the acceptance matrix relies on). False on any unknown or empty item.
template <class T>
bool ParseNameList(const char* v, const char* const* names, int count, std::vector<T>* out) {
  const char* item = v;
  for (;;) {
    const char* comma = strchr(item, ',');
    size_t len = comma ? (size_t)(comma - item) : strlen(item);
    bool all = len == 3 && !strncmp(item, "all", 3), known = all;
    for (int i = 0; i < count; ++i) {
      if (all || (strlen(names[i]) == len && !strncmp(item, names[i], len))) {
        out->push_back((T)i);
        known = true;
      }
    }
    if (!known) return false;
    if (!comma) return true;
    item = comma + 1;
  }
}

}  // namespace

const char* TypeName(tcclDataType_t t) { return kTypes[t]; }
const char* OpNameOf(tcclRedOp_t o) { return kOps[o]; }

std::string Usage() {
  return "usage: tessera-perf <all_reduce|reduce_scatter|all_gather|broadcast|reduce|alltoall|sendrecv>\n"
         "  -b minbytes  -e maxbytes  -f stepfactor  -i stepbytes  -n iters  -w warmup  -c check(0/1)\n"
         "  -o sum|prod|max|min|avg|all  -d int8|uint8|int32|uint32|int64|uint64|half|float|double|bfloat16|all\n"
         "     (-o and -d also take a comma-separated list: -d float,half,bfloat16)\n"
         "  -r root (-1: all roots)  -a 0|1|2|3 (time of rank 0, mean, min, max)  -J json-file\n"
         "  -D cuda-device (buffers in device memory, a CUDA communicator; default -1: host memory)\n"
         "  -R 0|1|2 (host buffers: 0 plain, 1 tcclMemAlloc, 2 registered with tcclCommRegister)\n"
         "  -W settle-ms (barriers before the first size, so freshly started ranks are spread over the\n"
         "     cores before anything is timed; default 200, 0 for correctness-only runs)\n"
         "Run as one rank of a job: tessera-run -n N tessera-perf ..., or mpirun -np N tessera-perf ...\n";
}

std::string ParseArgs(int argc, char** argv, Args* a) {
  if (argc < 2) return "missing collective";
  a->collective = argv[1];
  if (a->collective.size() > 5 && a->collective.substr(a->collective.size() - 5) == "_perf")
    a->collective.resize(a->collective.size() - 5);
  bool factorGiven = false;
  for (int i = 2; i < argc; ++i) {
    std::string f = argv[i];
    if (f.size() != 2 || f[0] != '-' || i + 1 >= argc) return "bad flag '" + f + "'";
    const char* v = argv[++i];
    switch (f[1]) {
      case 'b': if (!ParseSize(v, &a->minBytes)) return std::string("bad -b ") + v; break;
      case 'e': if (!ParseSize(v, &a->maxBytes)) return std::string("bad -e ") + v; break;
      case 'f': a->factor = atof(v); factorGiven = true; break;
      case 'i': if (!ParseSize(v, &a->increment)) return std::string("bad -i ") + v; break;
      case 'n': a->iters = atoi(v); break;
      case 'w': a->warmup = atoi(v); break;
      case 'c': a->check = atoi(v); break;
      case 'r': a->root = atoi(v); break;
      case 'a': a->average = atoi(v); break;
      case 'J': a->json = v; break;
      case 'D': a->cudaDevice = atoi(v); break;
      case 'R':
        a->registration = atoi(v);
        if (a->registration < 0 || a->registration > 2) return std::string("bad -R ") + v + " (0, 1 or 2)";
        break;
      case 'W':
        a->settleMs = atoi(v);
        if (a->settleMs < 0) return std::string("bad -W ") + v;
        break;
      case 'g': case 't': case 'm': case 'z': case 'G': case 'C':
        break;  // nccl-tests flags with no meaning for host ranks (GPUs/threads per process, graphs)
      case 'd': {
        std::vector<tcclDataType_t> picked;
        if (!ParseNameList(v, kTypes, tcclNumTypes, &picked)) return std::string("unknown -d ") + v;
        a->types = std::move(picked);
        break;
      }
      case 'o': {
        std::vector<tcclRedOp_t> picked;
        if (!ParseNameList(v, kOps, tcclNumOps, &picked)) return std::string("unknown -o ") + v;
        a->ops = std::move(picked);
        break;
      }
      default: return "unknown flag '" + f + "'";
    }
  }
  if (a->increment && !factorGiven) a->factor = 0;
  if (a->iters < 1 || a->warmup < 0) return "-n must be >= 1 and -w >= 0";
  if (a->minBytes > a->maxBytes) return "-b is larger than -e";
  if (a->factor != 0 && a->factor <= 1) return "-f must be greater than 1";
  return "";
}

}  // namespace perf
