// Schedule generators, one per algorithm. Each is a pure function of CollArgs.
#pragma once

#include "algorithms/schedule.h"

namespace tccl {

// ring.cc
Schedule RingAllReduce(const CollArgs& a);
Schedule RingReduceScatter(const CollArgs& a);
Schedule RingAllGather(const CollArgs& a);
// chain.cc: pipelined chain from/to the root
Schedule ChainBroadcast(const CollArgs& a);
Schedule ChainReduce(const CollArgs& a);
// pairwise.cc
Schedule PairwiseAllToAll(const CollArgs& a);
// direct.cc: everyone sends its whole buffer to everyone, then reduces locally in canonical order
Schedule DirectAllReduce(const CollArgs& a);
// direct_shot.cc: canonical-order algorithms for large messages
Schedule DirectReduceScatter(const CollArgs& a);
Schedule TwoShotAllReduce(const CollArgs& a);
Schedule DirectReduce(const CollArgs& a);

// Per-rank cost of each algorithm (costs.cc): rounds, bytes copied, bytes reduced.
struct AlgoCost {
  double rounds = 0;
  double copyBytes = 0;
  double reduceBytes = 0;
};
using CostFn = AlgoCost (*)(int nranks, double bytes);
AlgoCost DirectAllReduceCost(int n, double b);
AlgoCost TwoShotAllReduceCost(int n, double b);
AlgoCost RingAllReduceCost(int n, double b);
AlgoCost DirectReduceScatterCost(int n, double b);
AlgoCost RingReduceScatterCost(int n, double b);
AlgoCost RingAllGatherCost(int n, double b);
AlgoCost ChainBroadcastCost(int n, double b);
AlgoCost DirectReduceCost(int n, double b);
AlgoCost ChainReduceCost(int n, double b);
AlgoCost PairwiseAllToAllCost(int n, double b);

// Op builders shared by the generators (ops.cc).
Op MakeCopy(BufRef src, BufRef dst, size_t n);
Op MakeDivide(BufRef dst, size_t n);
Op MakeSend(int peer, BufRef src, size_t n);
Op MakeRecv(int peer, BufRef dst, size_t n);
Op MakeRecvReduce(int peer, BufRef dst, BufRef local, size_t n);  // dst = local OP incoming
Op MakeReduce(BufRef dst, BufRef x, BufRef y, size_t n);             // dst = x OP y

}  // namespace tccl
