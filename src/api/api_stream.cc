// C API: host streams and the determinism reference.
#include <vector>

#include "api/handles.h"
#include "kernels/host/dtype.h"
#include "kernels/host/tree_reduce.h"

using namespace tccl;

extern "C" {

tcclResult_t tcclStreamCreate(tcclStream_t* stream) {
  return ApiCall([&]() -> Status {
    if (!stream) return InvalidArgument("tcclStreamCreate: stream is NULL");
    *stream = NewStream();
    return Status::Ok();
  });
}

tcclResult_t tcclStreamSynchronize(tcclStream_t stream) {
  return ApiCall([&]() -> Status {
    HostStream* s = nullptr;
    TCCL_RETURN_IF_ERROR(CheckStream(stream, "tcclStreamSynchronize", &s));
    return s ? s->Synchronize() : Status::Ok();
  });
}

tcclResult_t tcclStreamQuery(tcclStream_t stream) {
  return ApiCall([&]() -> Status {
    HostStream* s = nullptr;
    TCCL_RETURN_IF_ERROR(CheckStream(stream, "tcclStreamQuery", &s));
    return s ? s->Query() : Status::Ok();
  });
}

tcclResult_t tcclStreamDestroy(tcclStream_t stream) {
  return ApiCall([&] { return DeleteStream(stream); });
}

tcclResult_t tcclReduceReference(const void* const* inputs, int nranks, void* output, size_t count,
                                 tcclDataType_t dt, tcclRedOp_t op) {
  // Ints until checked (handles.h, EnumArg).
  const int dtArg = EnumArg(dt), opArg = EnumArg(op);
  return ApiCall([&]() -> Status {
    if (nranks < 1) return InvalidArgument("tcclReduceReference: nranks must be at least 1");
    if (!ValidDtype(dtArg)) return InvalidArgument("tcclReduceReference: invalid datatype %d", dtArg);
    if (!ValidOp(opArg)) return InvalidArgument("tcclReduceReference: invalid op %d", opArg);
    if (count == 0) return Status::Ok();
    if (!inputs || !output) return InvalidArgument("tcclReduceReference: inputs or output is NULL");
    for (int i = 0; i < nranks; ++i)
      if (!inputs[i]) return InvalidArgument("tcclReduceReference: inputs[%d] is NULL", i);
    TreeReduce(inputs, nranks, output, count, DtypeSize(dt), GetReduceFn(dt, op));
    if (op == tcclAvg) GetDivideFn(dt)(output, count, nranks);
    return Status::Ok();
  });
}

}  // extern "C"
