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
Schedule DirectAllGather(const CollArgs& a);
Schedule DirectAllToAll(const CollArgs& a);
Schedule DirectBroadcast(const CollArgs& a);
// direct_shot.cc: canonical-order algorithms for large messages
Schedule DirectReduceScatter(const CollArgs& a);
Schedule TwoShotAllReduce(const CollArgs& a);
Schedule DirectReduce(const CollArgs& a);
// recursive_doubling.cc, binomial_tree.cc: few rounds, for small messages
Schedule RecursiveDoublingAllReduce(const CollArgs& a);
Schedule BinomialBroadcast(const CollArgs& a);
// recursive_halving.cc: Rabenseifner's halving then doubling, for medium and large messages
Schedule RecursiveHalvingAllReduce(const CollArgs& a);
Schedule RecursiveHalvingReduceScatter(const CollArgs& a);
// canonical_tree.cc: the canonical reduction tree as the communication tree, for small messages
Schedule CanonicalTreeAllReduce(const CollArgs& a);
Schedule CanonicalTreeReduce(const CollArgs& a);
// double_binary_tree.cc: two binary trees, each reducing and broadcasting half, pipelined in slices
Schedule DoubleBinaryTreeAllReduce(const CollArgs& a);
// staged.cc: the root (broadcast) or every rank (all-gather) stages pieces in shared scratch, the
// others read them in one copy
Schedule StagedBroadcast(const CollArgs& a);
Schedule StagedAllGather(const CollArgs& a);

// Op builders shared by the generators (ops.cc).
// A call with nothing to exchange: no elements, or one rank (which copies its input across when
// out of place). Returns true when `s` is then the whole schedule.
bool NothingToExchange(const CollArgs& a, Schedule* s);
Op MakeCopy(BufRef src, BufRef dst, size_t n);
Op MakeFinalCopy(BufRef src, BufRef dst, size_t n);  // into its final place, not read again (Op::finalDst)
Op MakeDivide(BufRef dst, size_t n);
Op MakeSend(int peer, BufRef src, size_t n);
Op MakeRecv(int peer, BufRef dst, size_t n);
Op MakeFinalRecv(int peer, BufRef dst, size_t n);  // into its final place, not read again (Op::finalDst)
Op MakeRecvReduce(int peer, BufRef dst, BufRef local, size_t n);  // dst = local OP incoming
// Whether a receive-and-reduce into the call's output writes its final place (Op::finalDst): not
// with avg, whose divide reads the output again, and not in place, where the reduce has just read
// each output line as its own operand: streaming stores over those lines ran the 2-rank in-place
// 16-64 MiB reduce 1.5-1.7x slower (docs/performance.md, "In place, not stored past the cache").
bool FinalReduceOutput(const CollArgs& a);
Op MakeReduce(BufRef dst, BufRef x, BufRef y, size_t n);             // dst = x OP y

}  // namespace tccl
