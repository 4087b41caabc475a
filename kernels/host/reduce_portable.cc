// Portable build of the reduction loops (whatever the baseline target vectorises to: SSE2 on
// x86-64).
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/host/half.h"
#include "kernels/host/reduce.h"

namespace tccl {
namespace portable {
namespace {
#include "kernels/host/reduce_loops.inc"
}  // namespace

ReduceFn GetReduce(tcclDataType_t dt, tcclRedOp_t op) { return PickGeneric(dt, op); }

}  // namespace portable
}  // namespace tccl
