// What each algorithm costs one rank, in the α-β-γ terms of the cost model (src/tuning): rounds
// (messages it must wait for in sequence), bytes it copies into and out of channels, and bytes it
// reduces — as functions of N and the call's byte size b (count x element size, per the C API:
// all-gather's send size, reduce-scatter's receive size, all-to-all's per-peer size). These follow
// from the schedules in the generator files; the simulator counts the same quantities from the
// schedules themselves (tests/simulator_test.cc checks that the two agree).
#include "algorithms/generators.h"

namespace tccl {

// Every message is copied twice on shared memory: into the channel by the sender and out by the
// receiver (a receive-and-reduce reads it once, counted as reduce bytes instead).
AlgoCost DirectAllReduceCost(int n, double b) { return {1, 2 * (n - 1) * b, (n - 1) * b}; }
AlgoCost TwoShotAllReduceCost(int n, double b) {
  return {2, 2 * 2.0 * (n - 1) / n * b, (double)(n - 1) / n * b};
}
AlgoCost RingAllReduceCost(int n, double b) {
  // Reduce-scatter: each step sends a chunk and receive-reduces one; all-gather: copies.
  double chunk = b / n;
  return {2.0 * (n - 1), (n - 1) * chunk + 2 * (n - 1) * chunk, (n - 1) * chunk};
}
AlgoCost DirectReduceScatterCost(int n, double b) { return {1, 2 * (n - 1) * b, (n - 1) * b}; }
AlgoCost RingReduceScatterCost(int n, double b) { return {(double)(n - 1), (n - 1) * b, (n - 1) * b}; }
AlgoCost RingAllGatherCost(int n, double b) { return {(double)(n - 1), 2 * (n - 1) * b, 0}; }
AlgoCost ChainBroadcastCost(int n, double b) { return {(double)(n - 1), 2 * b, 0}; }
// The root does the work: it receives N-1 inputs and tree-reduces them.
AlgoCost DirectReduceCost(int n, double b) { return {1, (n - 1) * b, (n - 1) * b}; }
AlgoCost ChainReduceCost(int n, double b) { return {(double)(n - 1), b, b}; }
AlgoCost PairwiseAllToAllCost(int n, double b) { return {(double)(n - 1), 2 * (n - 1) * b, 0}; }

}  // namespace tccl
