// Host reduce kernels against memcpy, in the same run (Google Benchmark).
//
//   build/perf/tccl-kernel-bench [--benchmark_filter=...]
//
// Each kernel computes dst = a OP b over `bytes` of each operand; memcpy copies `bytes`. Reported
// `bytes_per_second` counts the bytes each moves through memory: 3 x bytes for a reduce (two
// reads, one write), 2 x bytes for memcpy, so equal figures mean the kernel runs at memory speed.
// Sizes: 32 KiB (in L1/L2 cache) and 64 MiB (well beyond the 32 MiB L3: memory bound). The
// portable and AVX2 builds of each kernel are both measured where the CPU has AVX2.
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "kernels/host/dtype.h"
#include "kernels/host/reduce.h"

namespace {

constexpr size_t kInCache = 32 << 10;
constexpr size_t kOutOfCache = 64 << 20;

struct Buffers {
  std::vector<unsigned char> a, b, dst;
  explicit Buffers(size_t bytes) : a(bytes, 1), b(bytes, 2), dst(bytes, 0) {}
};

void BM_Memcpy(benchmark::State& state) {
  const size_t bytes = (size_t)state.range(0);
  Buffers buf(bytes);
  for (auto _ : state) {
    memcpy(buf.dst.data(), buf.a.data(), bytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed((int64_t)state.iterations() * (int64_t)bytes * 2);
}

void BM_Reduce(benchmark::State& state, tcclDataType_t dt, tcclRedOp_t op, tccl::KernelIsa isa) {
  const size_t bytes = (size_t)state.range(0);
  Buffers buf(bytes);
  tccl::ReduceFn fn = tccl::GetReduceFn(dt, op, isa);
  const size_t n = bytes / tccl::DtypeSize(dt);
  for (auto _ : state) {
    fn(buf.dst.data(), buf.a.data(), buf.b.data(), n);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed((int64_t)state.iterations() * (int64_t)bytes * 3);
}

void Register() {
  benchmark::RegisterBenchmark("memcpy", BM_Memcpy)->Arg(kInCache)->Arg(kOutOfCache);
  const tcclDataType_t types[] = {tcclFloat32, tcclFloat16, tcclBfloat16, tcclFloat64, tcclInt32, tcclInt8};
  std::vector<tccl::KernelIsa> isas{tccl::KernelIsa::Portable};
  if (tccl::BestIsa() == tccl::KernelIsa::Avx2) isas.push_back(tccl::KernelIsa::Avx2);
  for (tccl::KernelIsa isa : isas)
    for (tcclDataType_t dt : types)
      for (tcclRedOp_t op : {tcclSum, tcclMax}) {
        std::string name = std::string("reduce/") + tccl::IsaName(isa) + "/" + tccl::DtypeName(dt) + "/" + tccl::OpName(op);
        benchmark::RegisterBenchmark(name.c_str(), BM_Reduce, dt, op, isa)->Arg(kInCache)->Arg(kOutOfCache);
      }
}

}  // namespace

int main(int argc, char** argv) {
  Register();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
