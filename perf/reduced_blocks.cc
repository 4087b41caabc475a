#include "perf/reduced_blocks.h"

namespace perf {

ReducedBlocks& ReducedBlocks::Shared() {
  static ReducedBlocks* blocks = new ReducedBlocks;
  return *blocks;
}

std::shared_ptr<const ReducedBlock> ReducedBlocks::Find(const Key& k) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = blocks_.find(k);
  return it == blocks_.end() ? nullptr : it->second;
}

void ReducedBlocks::Add(const Key& k, std::shared_ptr<const ReducedBlock> b) {
  std::lock_guard<std::mutex> lock(mu_);
  if (bytes_ + b->ref.size() > kCapacity) blocks_.clear(), bytes_ = 0;
  bytes_ += b->ref.size();
  blocks_[k] = std::move(b);
}

}  // namespace perf
