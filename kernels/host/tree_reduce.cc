#include "kernels/host/tree_reduce.h"

#include <cstring>
#include <vector>

namespace tccl {

namespace {

// Elements per block: the tree is evaluated block by block so temporaries stay in L1/L2
// (2 temporaries per tree level x 16 KiB), whatever the message size.
constexpr size_t kBlockBytes = 16 << 10;

struct TreeEval {
  const void* const* inputs;
  size_t elemSize;
  ReduceFn fn;
  size_t offsetBytes;  // current block
  size_t n;            // elements in current block
  std::vector<std::vector<unsigned char>>* temps;

  const void* In(int i) const { return static_cast<const unsigned char*>(inputs[i]) + offsetBytes; }

  // Reduces [lo, hi) into dst; depth selects scratch so siblings never share it.
  void Eval(int lo, int hi, void* dst, int depth) {
    int mid = lo + (hi - lo + 1) / 2;
    const void* left = In(lo);
    const void* right = In(mid);
    if (mid - lo > 1) {
      void* t = (*temps)[2 * depth].data();
      Eval(lo, mid, t, depth + 1);
      left = t;
    }
    if (hi - mid > 1) {
      void* t = (*temps)[2 * depth + 1].data();
      Eval(mid, hi, t, depth + 1);
      right = t;
    }
    fn(dst, left, right, n);
  }
};

}  // namespace

void TreeReduce(const void* const* inputs, int n, void* out, size_t count, size_t elemSize, ReduceFn fn) {
  if (count == 0) return;
  if (n == 1) {
    if (out != inputs[0]) memmove(out, inputs[0], count * elemSize);
    return;
  }
  int depth = 0;
  for (int m = n; m > 1; m = (m + 1) / 2) ++depth;
  const size_t block = kBlockBytes / elemSize;
  // Temporaries are reused across calls on the same thread (allocating and zero-filling them per
  // call cost more than the reduction of a small slice).
  thread_local std::vector<std::vector<unsigned char>> temps;
  while (temps.size() < (size_t)(2 * depth)) temps.emplace_back(kBlockBytes);
  TreeEval ev{inputs, elemSize, fn, 0, 0, &temps};
  for (size_t b = 0; b < count; b += block) {
    ev.offsetBytes = b * elemSize;
    ev.n = count - b < block ? count - b : block;
    ev.Eval(0, n, static_cast<unsigned char*>(out) + ev.offsetBytes, 0);
  }
}

}  // namespace tccl
