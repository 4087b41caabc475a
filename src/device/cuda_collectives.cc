#include "device/cuda_collectives.h"

#include <algorithm>

#include "device/cuda_util.h"
#include "kernels/cuda/cuda_kernels.h"

namespace tccl {

namespace {

char* At(void* p, size_t off) { return static_cast<char*>(p) + off; }
const char* At(const void* p, size_t off) { return static_cast<const char*>(p) + off; }

Status Copy(void* dst, const void* src, size_t bytes, cudaStream_t s) {
  if (bytes == 0 || dst == src) return Status::Ok();
  return CudaStatus(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, s), "cudaMemcpyAsync");
}

// `rows` rows of `width` bytes, `srcPitch` / `dstPitch` apart: the per-peer blocks of a round.
Status Copy2D(void* dst, size_t dstPitch, const void* src, size_t srcPitch, size_t width, size_t rows, cudaStream_t s) {
  if (width == 0 || rows == 0) return Status::Ok();
  return CudaStatus(cudaMemcpy2DAsync(dst, dstPitch, src, srcPitch, width, rows, cudaMemcpyDefault, s),
                    "cudaMemcpy2DAsync");
}

// Elements per round when each rank stages `blocks` blocks of that many elements: the window's area
// over the block count, a multiple of 64 elements so every round starts 16-byte aligned.
size_t RoundElems(const IpcGroup& g, size_t es, size_t blocks) {
  size_t e = g.window->areaBytes() / (es * blocks);
  return std::max<size_t>(64, e / 64 * 64);
}

// Slice i of a round of `elems` elements: balanced, boundaries on 16-byte multiples.
size_t SliceStart(size_t elems, int parts, int i, size_t es) {
  size_t unit = std::max<size_t>(1, 16 / es);
  size_t s = PartStart(elems, (size_t)parts, (size_t)i);
  return std::min(elems, (s + unit - 1) / unit * unit);
}

// Tree-reduces `count` elements at `inOffset` of every rank's `in` area into `out`.
Status ReduceInputs(const IpcGroup& g, size_t inOffset, void* out, size_t count, tcclDataType_t dt, tcclRedOp_t op,
                    cudaStream_t s) {
  cuda::TreeInputs in;
  for (int p = 0; p < g.nranks; ++p) in.in[p] = At(g.window->in(p), inOffset);
  return CudaStatus(cuda::LaunchTreeReduce(in, g.nranks, out, count, dt, op, g.nranks, s), "the tree-reduce kernel");
}

// One round = stage, barrier, consume, barrier (two barriers: the parity stays even).
template <typename Stage, typename Consume>
Status Round(const IpcGroup& g, cudaStream_t s, Stage stage, Consume consume) {
  TCCL_RETURN_IF_ERROR(stage());
  TCCL_RETURN_IF_ERROR(g.barrier->Arrive(s, 0));
  TCCL_RETURN_IF_ERROR(consume());
  return g.barrier->Arrive(s, 1);
}

Status AllReduce(const IpcGroup& g, const CollArgs& a, tcclDataType_t dt, const void* send, void* recv,
                 cudaStream_t s) {
  const size_t es = a.elemSize, R = RoundElems(g, es, 1);
  const IpcAllReduce algo = ChooseIpcAllReduce(a.count * es, g.nranks);
  for (size_t off = 0; off < a.count; off += R) {
    const size_t c = std::min(R, a.count - off), b = c * es;
    auto stage = [&] { return Copy(g.window->in(g.rank), At(send, off * es), b, s); };
    if (algo == IpcAllReduce::OneShot) {
      TCCL_RETURN_IF_ERROR(Round(g, s, stage, [&] { return ReduceInputs(g, 0, At(recv, off * es), c, dt, a.op, s); }));
      continue;
    }
    // Two-shot: reduce my slice into my `out` area; after the second barrier gather every slice.
    const size_t lo = SliceStart(c, g.nranks, g.rank, es), hi = SliceStart(c, g.nranks, g.rank + 1, es);
    TCCL_RETURN_IF_ERROR(Round(g, s, stage, [&] {
      return ReduceInputs(g, lo * es, At(g.window->out(g.rank), lo * es), hi - lo, dt, a.op, s);
    }));
    for (int p = 0; p < g.nranks; ++p) {
      size_t plo = SliceStart(c, g.nranks, p, es), phi = SliceStart(c, g.nranks, p + 1, es);
      TCCL_RETURN_IF_ERROR(Copy(At(recv, (off + plo) * es), At(g.window->out(p), plo * es), (phi - plo) * es, s));
    }
  }
  return Status::Ok();
}

Status Reduce(const IpcGroup& g, const CollArgs& a, tcclDataType_t dt, const void* send, void* recv, cudaStream_t s) {
  const size_t es = a.elemSize, R = RoundElems(g, es, 1);
  for (size_t off = 0; off < a.count; off += R) {
    const size_t c = std::min(R, a.count - off);
    TCCL_RETURN_IF_ERROR(Round(
        g, s, [&] { return Copy(g.window->in(g.rank), At(send, off * es), c * es, s); },
        [&] { return g.rank == a.root ? ReduceInputs(g, 0, At(recv, off * es), c, dt, a.op, s) : Status::Ok(); }));
  }
  return Status::Ok();
}

// Reduce-scatter: a round stages, for every destination, the same element range of its block.
Status ReduceScatter(const IpcGroup& g, const CollArgs& a, tcclDataType_t dt, const void* send, void* recv,
                     cudaStream_t s) {
  const size_t es = a.elemSize, N = (size_t)g.nranks, R = RoundElems(g, es, N);
  for (size_t off = 0; off < a.count; off += R) {
    const size_t c = std::min(R, a.count - off);
    TCCL_RETURN_IF_ERROR(Round(
        g, s, [&] { return Copy2D(g.window->in(g.rank), c * es, At(send, off * es), a.count * es, c * es, N, s); },
        [&] { return ReduceInputs(g, (size_t)g.rank * c * es, At(recv, off * es), c, dt, a.op, s); }));
  }
  return Status::Ok();
}

Status AllGather(const IpcGroup& g, const CollArgs& a, const void* send, void* recv, cudaStream_t s) {
  const size_t es = a.elemSize, R = RoundElems(g, es, 1);
  for (size_t off = 0; off < a.count; off += R) {
    const size_t c = std::min(R, a.count - off);
    TCCL_RETURN_IF_ERROR(Round(
        g, s, [&] { return Copy(g.window->in(g.rank), At(send, off * es), c * es, s); },
        [&] {
          for (int p = 0; p < g.nranks; ++p)
            TCCL_RETURN_IF_ERROR(Copy(At(recv, ((size_t)p * a.count + off) * es), g.window->in(p), c * es, s));
          return Status::Ok();
        }));
  }
  return Status::Ok();
}

Status Broadcast(const IpcGroup& g, const CollArgs& a, const void* send, void* recv, cudaStream_t s) {
  const size_t es = a.elemSize, R = RoundElems(g, es, 1);
  const bool root = g.rank == a.root;
  for (size_t off = 0; off < a.count; off += R) {
    const size_t c = std::min(R, a.count - off);
    TCCL_RETURN_IF_ERROR(Round(
        g, s, [&] { return root ? Copy(g.window->in(g.rank), At(send, off * es), c * es, s) : Status::Ok(); },
        [&] { return Copy(At(recv, off * es), g.window->in(a.root), c * es, s); }));
  }
  return Status::Ok();
}

Status AllToAll(const IpcGroup& g, const CollArgs& a, const void* send, void* recv, cudaStream_t s) {
  const size_t es = a.elemSize, N = (size_t)g.nranks, R = RoundElems(g, es, N);
  for (size_t off = 0; off < a.count; off += R) {
    const size_t c = std::min(R, a.count - off);
    TCCL_RETURN_IF_ERROR(Round(
        g, s, [&] { return Copy2D(g.window->in(g.rank), c * es, At(send, off * es), a.count * es, c * es, N, s); },
        [&] {
          for (int p = 0; p < g.nranks; ++p)
            TCCL_RETURN_IF_ERROR(Copy(At(recv, ((size_t)p * a.count + off) * es),
                                      At(g.window->in(p), (size_t)g.rank * c * es), c * es, s));
          return Status::Ok();
        }));
  }
  return Status::Ok();
}

}  // namespace

// HBM bytes per rank for B bytes: one-shot stages (read B, write B), then reads all N inputs and
// writes B: (N + 3) B. Two-shot stages (2B), reduces its slice (read B, write B/N), then gathers
// (read B, write B): (5 + 1/N) B, for one more kernel, N copies and a second pass over the areas.
// At N <= 2 one-shot moves no more bytes; beyond, two-shot saves (N - 2 - 1/N) B, which repays its
// extra launches (~10 us measured per round on an H100, docs/gpu.md) from about 4 MiB at N = 3.
IpcAllReduce ChooseIpcAllReduce(size_t bytes, int nranks) {
  return nranks >= 3 && bytes >= (4u << 20) ? IpcAllReduce::TwoShot : IpcAllReduce::OneShot;
}

const char* IpcAllReduceName(IpcAllReduce a) { return a == IpcAllReduce::OneShot ? "oneshot" : "twoshot"; }

Status EnqueueIpcCollective(const IpcGroup& g, const CollArgs& a, tcclDataType_t dt, const void* send, void* recv,
                            cudaStream_t s) {
  switch (a.kind) {
    case CollKind::AllReduce: return AllReduce(g, a, dt, send, recv, s);
    case CollKind::Reduce: return Reduce(g, a, dt, send, recv, s);
    case CollKind::ReduceScatter: return ReduceScatter(g, a, dt, send, recv, s);
    case CollKind::AllGather: return AllGather(g, a, send, recv, s);
    case CollKind::Broadcast: return Broadcast(g, a, send, recv, s);
    case CollKind::AllToAll: return AllToAll(g, a, send, recv, s);
  }
  return InternalError("unknown collective kind %d", (int)a.kind);
}

}  // namespace tccl
