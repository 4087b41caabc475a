// C API: collectives, point-to-point, groups. Each entry validates its arguments completely before
// anything runs, so a bad call changes nothing and leaves the communicator usable.
#include <cstdint>

#include "api/handles.h"
#include "comm/group.h"
#include "kernels/host/dtype.h"

using namespace tccl;

namespace {

bool Overlap(const void* a, size_t an, const void* b, size_t bn) {
  auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return an && bn && x < y + bn && y < x + an;
}

struct Call {
  explicit Call(const char* name) : fn(name) {}
  const char* fn;
  CommRef comm;
  HostStream* stream = nullptr;
  void* cudaStream = nullptr;  // CUDA communicators: the cudaStream_t (NULL: the legacy default stream)
  // Set once checked (Begin, CheckOp); until then the entries hold them as ints (EnumArg).
  tcclDataType_t dt = tcclFloat;
  tcclRedOp_t op = tcclSum;
  size_t es = 0;
};

// Looks the communicator up once and checks what every call shares. `blocksPerRank`: the buffers
// hold `count` elements per rank (all-gather, reduce-scatter, all-to-all) rather than `count`.
Status Begin(Call& c, tcclComm_t comm, tcclStream_t stream, int dt, size_t count, bool blocksPerRank) {
  TCCL_RETURN_IF_ERROR(AcquireComm(comm, c.fn, &c.comm));
  if (c.comm->aborted()) return InvalidUsage("%s: the communicator was aborted", c.fn);
  if (c.comm->device()) c.cudaStream = stream;  // a cudaStream_t, not a host stream
  else TCCL_RETURN_IF_ERROR(CheckStream(stream, c.fn, &c.stream));
  if (!ValidDtype(dt)) return InvalidArgument("%s: datatype %d is not a tcclDataType_t", c.fn, dt);
  c.dt = (tcclDataType_t)dt;
  c.es = DtypeSize(c.dt);
  size_t multiple = blocksPerRank ? (size_t)c.comm->nranks() : 1;
  if (count > (SIZE_MAX / 4) / (c.es * multiple))
    return InvalidArgument("%s: count %zu overflows the byte size of the buffers", c.fn, count);
  return Status::Ok();
}

Status CheckOp(Call& c, int op) {
  if (!ValidOp(op)) return InvalidArgument("%s: reduction op %d is not a tcclRedOp_t", c.fn, op);
  c.op = (tcclRedOp_t)op;
  return Status::Ok();
}

Status CheckRoot(const Call& c, int root) {
  if (root < 0 || root >= c.comm->nranks())
    return InvalidArgument("%s: root %d is outside [0, %d)", c.fn, root, c.comm->nranks());
  return Status::Ok();
}

// Out of line: the refusals, and CUDA communicators' buffers (NeedBuf's common case is two tests).
[[gnu::noinline]] Status CheckBufFully(const Call& c, const void* p, const char* name, size_t count) {
  if (count && !p) return InvalidArgument("%s: %s is NULL", c.fn, name);
  if (count && c.comm->device() && !c.comm->device()->Addressable(p))
    return InvalidArgument("%s: %s (%p) is not memory CUDA device %d can address (a CUDA communicator takes device, "
                           "managed or registered host memory)",
                           c.fn, name, p, c.comm->cudaDevice());
  return Status::Ok();
}

Status NeedBuf(const Call& c, const void* p, const char* name, size_t count) {
  if (!count || (p && !c.comm->device())) return Status::Ok();
  return CheckBufFully(c, p, name, count);
}

// Runs now (NULL stream), enqueues on a host stream, or joins the current group.
Status Submit(const Call& c, const CollArgs& a, const void* send, void* recv) {
  const tcclDataType_t dt = c.dt;
  // CUDA communicators enqueue on the CUDA stream and return, inside a group too: enqueueing never
  // waits for peers, so issuing at once keeps group semantics (docs/gpu.md).
  if (c.comm->device()) return c.comm->device()->Enqueue(a, dt, send, recv, c.cudaStream);
  // The common case first, without copying the communicator's shared pointer into a closure
  // (two atomic reference-count updates: a tenth of an 8-byte call's software time).
  if (!c.stream && !InGroup()) return c.comm->RunCollective(a, dt, send, recv);
  auto comm = c.comm.Share();
  auto run = [comm, a, dt, send, recv] { return comm->RunCollective(a, dt, send, recv); };
  if (InGroup()) {
    GroupAddCollective(comm, c.stream, run);
    return Status::Ok();
  }
  c.stream->Enqueue(run);
  return Status::Ok();
}

CollArgs Args(CollKind k, size_t count, tcclRedOp_t op, int root, bool inPlace) {
  CollArgs a;
  a.kind = k;
  a.count = count;
  a.op = op;
  a.root = root;
  a.inPlace = inPlace;
  return a;
}

}  // namespace

extern "C" {

tcclResult_t tcclAllReduce(const void* sendbuff, void* recvbuff, size_t count, tcclDataType_t dt, tcclRedOp_t op,
                           tcclComm_t comm, tcclStream_t stream) {
  const int dtArg = EnumArg(dt), opArg = EnumArg(op);
  return ApiCall([&]() -> Status {
    Call c("tcclAllReduce");
    TCCL_RETURN_IF_ERROR(Begin(c, comm, stream, dtArg, count, false));
    TCCL_RETURN_IF_ERROR(CheckOp(c, opArg));
    TCCL_RETURN_IF_ERROR(NeedBuf(c, sendbuff, "sendbuff", count));
    TCCL_RETURN_IF_ERROR(NeedBuf(c, recvbuff, "recvbuff", count));
    bool inPlace = sendbuff == recvbuff;
    if (!inPlace && Overlap(sendbuff, count * c.es, recvbuff, count * c.es))
      return InvalidArgument("tcclAllReduce: sendbuff and recvbuff overlap without being equal");
    return Submit(c, Args(CollKind::AllReduce, count, c.op, 0, inPlace), sendbuff, recvbuff);
  });
}

tcclResult_t tcclBroadcast(const void* sendbuff, void* recvbuff, size_t count, tcclDataType_t dt, int root,
                           tcclComm_t comm, tcclStream_t stream) {
  const int dtArg = EnumArg(dt);
  return ApiCall([&]() -> Status {
    Call c("tcclBroadcast");
    TCCL_RETURN_IF_ERROR(Begin(c, comm, stream, dtArg, count, false));
    TCCL_RETURN_IF_ERROR(CheckRoot(c, root));
    bool isRoot = c.comm->rank() == root;
    if (isRoot) TCCL_RETURN_IF_ERROR(NeedBuf(c, sendbuff, "sendbuff (on the root)", count));
    TCCL_RETURN_IF_ERROR(NeedBuf(c, recvbuff, "recvbuff", count));
    bool inPlace = !isRoot || sendbuff == recvbuff;
    if (isRoot && !inPlace && Overlap(sendbuff, count * c.es, recvbuff, count * c.es))
      return InvalidArgument("tcclBroadcast: sendbuff and recvbuff overlap without being equal");
    return Submit(c, Args(CollKind::Broadcast, count, tcclSum, root, inPlace), sendbuff, recvbuff);
  });
}

tcclResult_t tcclReduce(const void* sendbuff, void* recvbuff, size_t count, tcclDataType_t dt, tcclRedOp_t op, int root,
                        tcclComm_t comm, tcclStream_t stream) {
  const int dtArg = EnumArg(dt), opArg = EnumArg(op);
  return ApiCall([&]() -> Status {
    Call c("tcclReduce");
    TCCL_RETURN_IF_ERROR(Begin(c, comm, stream, dtArg, count, false));
    TCCL_RETURN_IF_ERROR(CheckOp(c, opArg));
    TCCL_RETURN_IF_ERROR(CheckRoot(c, root));
    bool isRoot = c.comm->rank() == root;
    TCCL_RETURN_IF_ERROR(NeedBuf(c, sendbuff, "sendbuff", count));
    if (isRoot) TCCL_RETURN_IF_ERROR(NeedBuf(c, recvbuff, "recvbuff (on the root)", count));
    bool inPlace = sendbuff == recvbuff;
    if (isRoot && !inPlace && Overlap(sendbuff, count * c.es, recvbuff, count * c.es))
      return InvalidArgument("tcclReduce: sendbuff and recvbuff overlap without being equal");
    return Submit(c, Args(CollKind::Reduce, count, c.op, root, inPlace), sendbuff, recvbuff);
  });
}

tcclResult_t tcclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, tcclDataType_t dt, tcclComm_t comm,
                           tcclStream_t stream) {
  const int dtArg = EnumArg(dt);
  return ApiCall([&]() -> Status {
    Call c("tcclAllGather");
    TCCL_RETURN_IF_ERROR(Begin(c, comm, stream, dtArg, sendcount, true));
    TCCL_RETURN_IF_ERROR(NeedBuf(c, sendbuff, "sendbuff", sendcount));
    TCCL_RETURN_IF_ERROR(NeedBuf(c, recvbuff, "recvbuff", sendcount));
    size_t bytes = sendcount * c.es, N = (size_t)c.comm->nranks();
    bool inPlace = sendbuff == static_cast<char*>(recvbuff) + c.comm->rank() * bytes;
    if (!inPlace && Overlap(sendbuff, bytes, recvbuff, N * bytes))
      return InvalidArgument("tcclAllGather: sendbuff overlaps recvbuff but is not recvbuff + rank*sendcount");
    return Submit(c, Args(CollKind::AllGather, sendcount, tcclSum, 0, inPlace), sendbuff, recvbuff);
  });
}

tcclResult_t tcclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, tcclDataType_t dt,
                               tcclRedOp_t op, tcclComm_t comm, tcclStream_t stream) {
  const int dtArg = EnumArg(dt), opArg = EnumArg(op);
  return ApiCall([&]() -> Status {
    Call c("tcclReduceScatter");
    TCCL_RETURN_IF_ERROR(Begin(c, comm, stream, dtArg, recvcount, true));
    TCCL_RETURN_IF_ERROR(CheckOp(c, opArg));
    TCCL_RETURN_IF_ERROR(NeedBuf(c, sendbuff, "sendbuff", recvcount));
    TCCL_RETURN_IF_ERROR(NeedBuf(c, recvbuff, "recvbuff", recvcount));
    size_t bytes = recvcount * c.es, N = (size_t)c.comm->nranks();
    bool inPlace = recvbuff == static_cast<const char*>(sendbuff) + c.comm->rank() * bytes;
    if (!inPlace && Overlap(sendbuff, N * bytes, recvbuff, bytes))
      return InvalidArgument("tcclReduceScatter: recvbuff overlaps sendbuff but is not sendbuff + rank*recvcount");
    return Submit(c, Args(CollKind::ReduceScatter, recvcount, c.op, 0, inPlace), sendbuff, recvbuff);
  });
}

tcclResult_t tcclAlltoAll(const void* sendbuff, void* recvbuff, size_t count, tcclDataType_t dt, tcclComm_t comm,
                          tcclStream_t stream) {
  const int dtArg = EnumArg(dt);
  return ApiCall([&]() -> Status {
    Call c("tcclAlltoAll");
    TCCL_RETURN_IF_ERROR(Begin(c, comm, stream, dtArg, count, true));
    TCCL_RETURN_IF_ERROR(NeedBuf(c, sendbuff, "sendbuff", count));
    TCCL_RETURN_IF_ERROR(NeedBuf(c, recvbuff, "recvbuff", count));
    size_t total = count * c.es * (size_t)c.comm->nranks();
    bool inPlace = sendbuff == recvbuff;
    if (!inPlace && Overlap(sendbuff, total, recvbuff, total))
      return InvalidArgument("tcclAlltoAll: sendbuff and recvbuff overlap without being equal");
    return Submit(c, Args(CollKind::AllToAll, count, tcclSum, 0, inPlace), sendbuff, recvbuff);
  });
}

static Status PointToPoint(const char* fn, bool send, void* buf, size_t count, int dtArg, int peer,
                           tcclComm_t comm, tcclStream_t stream) {
  Call c(fn);
  TCCL_RETURN_IF_ERROR(Begin(c, comm, stream, dtArg, count, false));
  if (peer < 0 || peer >= c.comm->nranks())
    return InvalidArgument("%s: peer %d is outside [0, %d)", fn, peer, c.comm->nranks());
  if (c.comm->device())
    return InvalidUsage("%s: send/recv on CUDA communicators is not implemented in this version (collectives are; "
                        "see docs/gpu.md)",
                        fn);
  TCCL_RETURN_IF_ERROR(NeedBuf(c, buf, send ? "sendbuff" : "recvbuff", count));
  P2POp op{send, peer, buf, count * c.es};
  if (InGroup()) {
    GroupAddP2P(c.comm.Share(), c.stream, op);
    return Status::Ok();
  }
  if (!c.stream) return c.comm->RunP2P({op});
  auto comm2 = c.comm.Share();
  auto run = [comm2, op] { return comm2->RunP2P({op}); };
  c.stream->Enqueue(run);
  return Status::Ok();
}

tcclResult_t tcclSend(const void* sendbuff, size_t count, tcclDataType_t dt, int peer, tcclComm_t comm,
                      tcclStream_t stream) {
  const int dtArg = EnumArg(dt);
  return ApiCall(
      [&] { return PointToPoint("tcclSend", true, const_cast<void*>(sendbuff), count, dtArg, peer, comm, stream); });
}

tcclResult_t tcclRecv(void* recvbuff, size_t count, tcclDataType_t dt, int peer, tcclComm_t comm, tcclStream_t stream) {
  const int dtArg = EnumArg(dt);
  return ApiCall([&] { return PointToPoint("tcclRecv", false, recvbuff, count, dtArg, peer, comm, stream); });
}

tcclResult_t tcclGroupStart(void) {
  return ApiCall([] {
    GroupStart();
    return Status::Ok();
  });
}

tcclResult_t tcclGroupEnd(void) { return ApiCall([] { return GroupEnd(); }); }

}  // extern "C"
