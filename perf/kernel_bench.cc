// Host reduce kernels against memcpy, in the same run (Google Benchmark).
//
//   build/perf/tccl-kernel-bench [--benchmark_filter=...]
//
// Each kernel computes dst = a OP b over `bytes` of each operand; memcpy copies `bytes`. Reported
// `bytes_per_second` counts the bytes each moves through memory: 3 x bytes for a reduce (two
// reads, one write), 2 x bytes for memcpy, so equal figures mean the kernel runs at memory speed.
// Each kernel runs out of place (dst a third buffer) and in place (dst == a, as collectives
// accumulate into their receive buffer); docs/kernels.md says why the two differ.
// Sizes: 8 KiB, 32 KiB and 256 KiB (in cache: L1, L1 to L2, L2) and 64 MiB (memory bound); see
// kSizes. The portable, AVX2 and AVX-512 builds of each kernel are measured where the CPU runs them.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "kernels/host/dtype.h"
#include "kernels/host/reduce.h"

namespace {

// The sizes, per operand: the three buffers of a reduce in L1 (8 KiB: 24 KiB against the 32-48 KiB
// L1 data caches of current x86 cores), spilling out of L1 into L2 (32 KiB), in L2 (256 KiB: 768 KiB
// against a 1 MiB L2 or more), and beyond the last-level cache (64 MiB: memory bound).
constexpr size_t kSizes[] = {8 << 10, 32 << 10, 256 << 10, 64 << 20};

// The three buffers share one page-aligned block, each on a cache-line boundary. dst sits at the
// lowest offset modulo 4 KiB (a at +256 B, b at +512 B), so a store to dst[i] shares its low 12
// address bits only with elements of a and b already loaded, and no load waits on a store it
// merely appears to alias (4 KiB aliasing). With three std::vector buffers at whatever offsets
// malloc gave, memcpy at 32 KiB measured 138-150 GB/s instead of 250-258 (docs/kernels.md).
struct Buffers {
  static constexpr size_t kSkew = 256;
  explicit Buffers(size_t bytes) {
    const size_t stride = (bytes + 2 * kSkew + 4095) / 4096 * 4096;
    block_ = static_cast<unsigned char*>(std::aligned_alloc(4096, 3 * stride));
    dst = block_;
    a = block_ + stride + kSkew;
    b = block_ + 2 * stride + 2 * kSkew;
    memset(a, 1, bytes);
    memset(b, 2, bytes);
    memset(dst, 0, bytes);
  }
  ~Buffers() { std::free(block_); }
  Buffers(const Buffers&) = delete;
  Buffers& operator=(const Buffers&) = delete;
  unsigned char *a, *b, *dst;

 private:
  unsigned char* block_;
};

void BM_Memcpy(benchmark::State& state) {
  const size_t bytes = (size_t)state.range(0);
  Buffers buf(bytes);
  for (auto _ : state) {
    memcpy(buf.dst, buf.a, bytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed((int64_t)state.iterations() * (int64_t)bytes * 2);
}

// inPlace: dst is a (accumulate into a buffer, as a ring step or a tree's parent does).
void BM_Reduce(benchmark::State& state, tcclDataType_t dt, tcclRedOp_t op, tccl::KernelIsa isa, bool inPlace) {
  const size_t bytes = (size_t)state.range(0);
  Buffers buf(bytes);
  tccl::ReduceFn fn = tccl::GetReduceFn(dt, op, isa);
  const size_t n = bytes / tccl::DtypeSize(dt);
  unsigned char* dst = inPlace ? buf.a : buf.dst;
  for (auto _ : state) {
    fn(dst, buf.a, buf.b, n);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed((int64_t)state.iterations() * (int64_t)bytes * 3);
}

void AddSizes(benchmark::internal::Benchmark* b) {
  for (size_t bytes : kSizes) b->Arg((int64_t)bytes);
}

void Register() {
  benchmark::RegisterBenchmark("memcpy", BM_Memcpy)->Apply(AddSizes);
  const tcclDataType_t types[] = {tcclFloat32, tcclFloat16, tcclBfloat16, tcclFloat64, tcclInt32, tcclInt8};
  for (tccl::KernelIsa isa : tccl::SupportedIsas())
    for (tcclDataType_t dt : types)
      for (tcclRedOp_t op : {tcclSum, tcclMax})
        for (bool inPlace : {false, true}) {
          std::string name = std::string(inPlace ? "reduce_in_place/" : "reduce/") + tccl::IsaName(isa) + "/" +
                             tccl::DtypeName(dt) + "/" + tccl::OpName(op);
          benchmark::RegisterBenchmark(name.c_str(), BM_Reduce, dt, op, isa, inPlace)->Apply(AddSizes);
        }
}

}  // namespace

int main(int argc, char** argv) {
  Register();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;  // a mistyped flag, not a full run
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
