// Runs body(i) for every i in [0, n) on all of the machine's cores. For sweeps of pure computation
// (the simulator's proofs) whose items share nothing: on CI's two cores the simulator tests took
// two minutes of the suite one item after another. A gtest assertion that fails in body fails the
// test as usual (gtest's assertions are thread-safe); a fatal one returns from that item's body only.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace tccl {

template <class Body>
void ParallelFor(size_t n, Body body) {
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < n; i = next++) body(i);
  };
  const size_t workers = std::min<size_t>(n, std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> helpers;
  for (size_t w = 1; w < workers; ++w) helpers.emplace_back(work);
  work();
  for (std::thread& t : helpers) t.join();
}

}  // namespace tccl
