// tccl-detcheck: checks the determinism contract on the user's own machines and prints a
// pass/fail table. Run it as a job: `tessera-run -n 8 tccl-detcheck`, `mpirun -np 64 tccl-detcheck`.
//
// For every reducing collective, floating-point type and algorithm allowed in strict mode (and
// automatic selection), at several sizes, it reduces order-sensitive inputs and compares every
// output element bit for bit with tcclReduceReference. Exit status 0 only if every row passes.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/host/dtype.h"
#include "perf/perf_colls.h"
#include "perf/perf_data.h"
#include "tccl/tccl.h"

namespace {

struct Row {
  const char* coll;
  const char* algo;  // TCCL_ALGO clause forcing it ("" = automatic selection)
};

const Row kRows[] = {
    {"all_reduce", ""},          {"all_reduce", "allreduce:direct"},         {"all_reduce", "allreduce:twoshot"},
    {"reduce_scatter", ""},      {"reduce_scatter", "reducescatter:direct"}, {"reduce", ""},
    {"reduce", "reduce:direct"},
};
const tcclDataType_t kTypes[] = {tcclFloat32, tcclFloat16, tcclBfloat16, tcclFloat64};
const char* kTypeNames[] = {"float", "half", "bfloat16", "double"};
const tcclRedOp_t kOps[] = {tcclSum, tcclProd, tcclAvg};
const size_t kCounts[] = {1, 1000, 65537, 1 << 20};

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc == 2 && !strcmp(argv[1], "--quick");
  if (argc > 2 || (argc == 2 && !quick)) {
    fprintf(stderr, "usage: tccl-detcheck [--quick]   (under a launcher, e.g. tessera-run -n N tccl-detcheck)\n");
    return 2;
  }
  tcclComm_t world;
  tcclResult_t rc = tcclCommInitFromEnv(&world, nullptr);
  if (rc == tcclInvalidUsage) {  // no launcher: one rank
    tcclUniqueId id;
    rc = tcclGetUniqueId(&id);
    if (rc == tcclSuccess) rc = tcclCommInitRank(&world, 1, id, 0);
  }
  if (rc != tcclSuccess) {
    fprintf(stderr, "tccl-detcheck: init failed: %s\n", tcclGetLastError(nullptr));
    return 2;
  }
  int rank = 0, n = 1;
  tcclCommUserRank(world, &rank);
  tcclCommCount(world, &n);
  if (rank == 0)
    printf("# tccl-detcheck: %d ranks, strict determinism; every element compared bit for bit with "
           "tcclReduceReference\n# %-15s %-22s %-9s %-5s %10s %10s  %s\n",
           n, "collective", "algorithm", "type", "op", "elements", "#differ", "result");
  int failedRows = 0;
  for (const Row& row : kRows) {
    tcclConfig_t cfg = TCCL_CONFIG_INITIALIZER;
    cfg.determinism = tcclDeterminismStrict;
    cfg.algo = row.algo;
    tcclComm_t comm = nullptr;
    if (tcclCommSplit(world, 0, rank, &comm, &cfg) != tcclSuccess) {
      fprintf(stderr, "tccl-detcheck: split failed: %s\n", tcclGetLastError(world));
      return 2;
    }
    const perf::Coll& c = *perf::FindColl(row.coll);
    for (size_t ti = 0; ti < sizeof(kTypes) / sizeof(kTypes[0]); ++ti) {
      for (tcclRedOp_t op : kOps) {
        int64_t differ = 0, elements = 0;
        bool callFailed = false;
        for (size_t count : kCounts) {
          if (quick && count > 70000) continue;
          const size_t es = tccl::DtypeSize(kTypes[ti]);
          perf::Shape s = c.shape(perf::BytesForCount(c, count, es, n), es, n);
          std::vector<unsigned char> send(s.sendElems * es + 8), recv(s.recvElems * es + 8);
          uint64_t seed = count * 2654435761u + ti * 97 + op;
          perf::FillInput(send.data(), s.sendElems, 0, kTypes[ti], op, rank, seed);
          if (c.run(send.data(), recv.data(), s, kTypes[ti], op, 0, comm, nullptr) != tcclSuccess) {
            fprintf(stderr, "rank %d: %s failed: %s\n", rank, row.coll, tcclGetLastError(comm));
            callFailed = true;
            break;
          }
          perf::CheckResult r = perf::CheckOutput(c, recv.data(), s, kTypes[ti], op, rank, n, 0, seed);
          differ += r.det;
          elements += c.hasOutput(rank, 0) ? (int64_t)s.recvElems : 0;
        }
        int64_t totals[3] = {differ, elements, callFailed};
        tcclAllReduce(totals, totals, 3, tcclInt64, tcclSum, world, nullptr);
        bool pass = totals[0] == 0 && totals[2] == 0;
        failedRows += !pass;
        if (rank == 0)
          printf("  %-15s %-22s %-9s %-5s %10lld %10lld  %s\n", row.coll, row.algo[0] ? row.algo : "(automatic)",
                 kTypeNames[ti], op == tcclSum ? "sum" : op == tcclProd ? "prod" : "avg", (long long)totals[1],
                 (long long)totals[0], pass ? "PASS" : (totals[2] ? "FAIL (call failed)" : "FAIL"));
      }
    }
    tcclCommDestroy(comm);
  }
  if (rank == 0) printf("# %s: %d row(s) failed\n", failedRows ? "FAIL" : "PASS", failedRows);
  tcclCommDestroy(world);
  return failedRows ? 1 : 0;
}
