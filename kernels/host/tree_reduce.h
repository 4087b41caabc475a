// Local reduction of N inputs in the canonical order of docs/determinism.md: a balanced binary
// tree over rank indices. The range [lo, hi) splits at mid = lo + ceil((hi - lo) / 2); the left
// subtree's result is the left operand. For N = 5: ((x0 + x1) + x2) + (x3 + x4).
#pragma once

#include <cstddef>

#include "kernels/host/reduce.h"

namespace tccl {

// out may alias inputs[i] (only the final combination writes out, element by element).
void TreeReduce(const void* const* inputs, int n, void* out, size_t count, size_t elemSize, ReduceFn fn);

}  // namespace tccl
