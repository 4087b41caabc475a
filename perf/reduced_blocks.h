// The reduced blocks this process's output checks computed last (perf_data.cc), shared by its
// ranks: ranks as threads (the test sweeps) check an all-reduce's same elements against the same
// reference, and regenerating every rank's inputs for each block was N times the work (most of an
// 8-rank sweep under the sanitizers). A block's reference is a pure function of its key, so a
// rank whose output block has the reference's bits takes the count outside the rounding bound
// from the rank that computed it first; the check does any other block in full.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

namespace perf {

struct ReducedBlock {
  std::vector<unsigned char> ref;  // tcclReduceReference's bits
  int64_t outside = 0;             // of its elements, those outside the rounding bound
};

class ReducedBlocks {
 public:
  // dtype, op, ranks, seed, first element index, elements
  using Key = std::tuple<int, int, int, uint64_t, size_t, size_t>;

  // The one instance of the process (never destroyed: thread ranks may outlive main).
  static ReducedBlocks& Shared();

  std::shared_ptr<const ReducedBlock> Find(const Key& k);
  void Add(const Key& k, std::shared_ptr<const ReducedBlock> b);

 private:
  // Above the largest reduced output the sweeps check (a few MiB); a process that checks more
  // starts over, which costs nothing but the copies.
  static constexpr size_t kCapacity = (size_t)64 << 20;
  std::mutex mu_;
  std::map<Key, std::shared_ptr<const ReducedBlock>> blocks_;
  size_t bytes_ = 0;
};

}  // namespace perf
