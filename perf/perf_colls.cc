#include "perf/perf_colls.h"

#include <cstring>

namespace perf {

namespace {

size_t Units(size_t bytes, size_t es, size_t per) { return bytes / (es * per); }

Shape Flat(size_t bytes, size_t es, int) {
  size_t c = Units(bytes, es, 1);
  return {c, c, c, c * es};
}
Shape Gather(size_t bytes, size_t es, int n) {  // recv holds n blocks
  size_t c = Units(bytes, es, n);
  return {c, c, c * n, c * n * es};
}
Shape Scatter(size_t bytes, size_t es, int n) {  // send holds n blocks
  size_t c = Units(bytes, es, n);
  return {c, c * n, c, c * n * es};
}
Shape AllToAllShape(size_t bytes, size_t es, int n) {
  size_t c = Units(bytes, es, n);
  return {c, c * n, c * n, c * n * es};
}

double One(int) { return 1.0; }
double NMinus1OverN(int n) { return (double)(n - 1) / n; }
double TwoNMinus1OverN(int n) { return 2.0 * (n - 1) / n; }

bool Everyone(int, int) { return true; }
bool RootOnly(int rank, int root) { return rank == root; }

tcclResult_t RunAllReduce(const void* s, void* r, const Shape& sh, tcclDataType_t dt, tcclRedOp_t op, int, tcclComm_t c, tcclStream_t st) {
  return tcclAllReduce(s, r, sh.count, dt, op, c, st);
}
tcclResult_t RunReduceScatter(const void* s, void* r, const Shape& sh, tcclDataType_t dt, tcclRedOp_t op, int, tcclComm_t c, tcclStream_t st) {
  return tcclReduceScatter(s, r, sh.count, dt, op, c, st);
}
tcclResult_t RunAllGather(const void* s, void* r, const Shape& sh, tcclDataType_t dt, tcclRedOp_t, int, tcclComm_t c, tcclStream_t st) {
  return tcclAllGather(s, r, sh.count, dt, c, st);
}
tcclResult_t RunBroadcast(const void* s, void* r, const Shape& sh, tcclDataType_t dt, tcclRedOp_t, int root, tcclComm_t c, tcclStream_t st) {
  return tcclBroadcast(s, r, sh.count, dt, root, c, st);
}
tcclResult_t RunReduce(const void* s, void* r, const Shape& sh, tcclDataType_t dt, tcclRedOp_t op, int root, tcclComm_t c, tcclStream_t st) {
  return tcclReduce(s, r, sh.count, dt, op, root, c, st);
}
tcclResult_t RunAllToAll(const void* s, void* r, const Shape& sh, tcclDataType_t dt, tcclRedOp_t, int, tcclComm_t c, tcclStream_t st) {
  return tcclAlltoAll(s, r, sh.count, dt, c, st);
}
// Each rank sends to rank+1 and receives from rank-1, as nccl-tests' sendrecv.
tcclResult_t RunSendRecv(const void* s, void* r, const Shape& sh, tcclDataType_t dt, tcclRedOp_t, int, tcclComm_t c, tcclStream_t st) {
  int rank = 0, n = 1;
  tcclCommUserRank(c, &rank);
  tcclCommCount(c, &n);
  tcclGroupStart();
  tcclSend(s, sh.count, dt, (rank + 1) % n, c, st);
  tcclRecv(r, sh.count, dt, (rank - 1 + n) % n, c, st);
  return tcclGroupEnd();
}

Source Reduced(int, int, int, const Shape&, size_t j) { return {-1, j}; }
Source ReduceScattered(int rank, int, int, const Shape& s, size_t j) { return {-1, rank * s.count + j}; }
Source FromRoot(int, int, int root, const Shape&, size_t j) { return {root, j}; }
Source Gathered(int, int, int, const Shape& s, size_t j) { return {(int)(j / s.count), j % s.count}; }
Source Exchanged(int rank, int, int, const Shape& s, size_t j) { return {(int)(j / s.count), rank * s.count + j % s.count}; }
Source FromPrev(int rank, int n, int, const Shape&, size_t j) { return {(rank - 1 + n) % n, j}; }

const Coll kColls[] = {
    {"all_reduce", true, false, Flat, TwoNMinus1OverN, RunAllReduce, Reduced, Everyone},
    {"reduce_scatter", true, false, Scatter, NMinus1OverN, RunReduceScatter, ReduceScattered, Everyone},
    {"all_gather", false, false, Gather, NMinus1OverN, RunAllGather, Gathered, Everyone},
    {"broadcast", false, true, Flat, One, RunBroadcast, FromRoot, Everyone},
    {"reduce", true, true, Flat, One, RunReduce, Reduced, RootOnly},
    {"alltoall", false, false, AllToAllShape, NMinus1OverN, RunAllToAll, Exchanged, Everyone},
    {"sendrecv", false, false, Flat, One, RunSendRecv, FromPrev, Everyone},
};

}  // namespace

const Coll* FindColl(const std::string& name) {
  for (const Coll& c : kColls)
    if (name == c.name) return &c;
  return nullptr;
}

const Coll* AllColls(size_t* n) {
  *n = sizeof(kColls) / sizeof(kColls[0]);
  return kColls;
}

size_t BytesForCount(const Coll& c, size_t count, size_t es, int nranks) {
  std::string n = c.name;
  bool blocks = n == "all_gather" || n == "reduce_scatter" || n == "alltoall";
  return count * es * (blocks ? nranks : 1);
}

void InPlacePointers(const Coll& c, void* base, size_t es, int rank, const Shape& s, void** send, void** recv) {
  char* b = static_cast<char*>(base);
  std::string n = c.name;
  if (n == "all_gather") {
    *recv = b;
    *send = b + rank * s.count * es;
  } else if (n == "reduce_scatter") {
    *send = b;
    *recv = b + rank * s.count * es;
  } else {
    *send = b;
    *recv = b;
  }
}

}  // namespace perf
