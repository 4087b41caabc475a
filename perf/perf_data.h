// tessera-perf's data: order-sensitive inputs any rank can regenerate for any other rank, and the
// check of every output element against tcclReduceReference (exact bits -> #det) and against the
// exact value within a rounding bound (-> #wrong).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "perf/perf_colls.h"

namespace perf {

// Input element `index` of `rank`. Floats span 2^-8..2^9 with random signs, so sums depend on the
// order of additions; for prod they stay near 1 so products of 8 neither overflow nor underflow.
void FillInput(void* buf, size_t elems, size_t firstIndex, tcclDataType_t dt, tcclRedOp_t op, int rank, uint64_t seed);

struct CheckResult {
  int64_t wrong = 0;  // outside the rounding bound (or not equal, for exact types and data movement)
  int64_t det = 0;    // bits differ from tcclReduceReference (reductions) or from the source
};

CheckResult CheckOutput(const Coll& c, const void* out, const Shape& s, tcclDataType_t dt, tcclRedOp_t op, int rank,
                        int nranks, int root, uint64_t seed);

// CheckOutput with the last check remembered: a check is a pure function of its arguments and the
// output's bytes, and regenerates every rank's inputs for each output element (three quarters of
// an 8-rank all-reduce run of check_matrix.sh), while the in-place run of a size usually leaves
// exactly the out-of-place run's bytes (always in strict mode). Same arguments and same bytes: the
// remembered result, for the price of a comparison.
class CheckMemo {
 public:
  CheckResult Check(const Coll& c, const void* out, const Shape& s, tcclDataType_t dt, tcclRedOp_t op, int rank,
                    int nranks, int root, uint64_t seed);

 private:
  struct Key {
    const Coll* coll;
    size_t count, sendElems, recvElems, bytes;
    tcclDataType_t dt;
    tcclRedOp_t op;
    int rank, nranks, root;
    uint64_t seed;
    bool operator==(const Key& o) const;
  };
  bool valid_ = false;
  Key key_{};
  std::vector<unsigned char> bytes_;  // the output last checked (its size follows from key_)
  CheckResult result_;
};

}  // namespace perf
