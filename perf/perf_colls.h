// The collectives tessera-perf measures: how a byte size maps to counts, the nccl-tests bus-bandwidth
// factor, how to call each one, and which input element each output element comes from.
#pragma once

#include <cstddef>
#include <string>

#include "tccl/tccl.h"

namespace perf {

struct Shape {
  size_t count;      // the count argument of the API call
  size_t sendElems;  // elements in sendbuff
  size_t recvElems;  // elements in recvbuff
  size_t bytes;      // the "size" column (nccl-tests: the larger of the two buffers)
};

// Where output element j of `rank` comes from: for reductions, the input index every rank
// contributes; otherwise the (rank, index) of the single source element.
struct Source {
  int rank;   // -1: reduction over all ranks
  size_t index;
};

struct Coll {
  const char* name;
  bool reduces;
  bool rooted;
  Shape (*shape)(size_t bytes, size_t elemSize, int nranks);
  double (*busFactor)(int nranks);
  // Issues the call. In place: buffers aliased per the NCCL in-place rules.
  // `stream`: NULL (blocking) or a host stream.
  tcclResult_t (*run)(const void* send, void* recv, const Shape& s, tcclDataType_t dt, tcclRedOp_t op, int root,
                      tcclComm_t comm, tcclStream_t stream);
  Source (*source)(int rank, int nranks, int root, const Shape& s, size_t j);
  // True where output element j of this rank is defined (reduce: only the root's).
  bool (*hasOutput)(int rank, int root);
};

const Coll* FindColl(const std::string& name);
const Coll* AllColls(size_t* n);
// The byte size whose Shape has the given API count.
size_t BytesForCount(const Coll& c, size_t count, size_t elemSize, int nranks);
// Send/recv pointers for the in-place variant, inside one allocation `base` of enough elements.
void InPlacePointers(const Coll& c, void* base, size_t elemSize, int rank, const Shape& s, void** send, void** recv);

}  // namespace perf
