// gpu-labelled tests, ranks as threads sharing one device (tcclCommInitAll with a device list):
// the device tree-reduce kernel against tcclReduceReference, the full collective sweep, stream
// ordering, CUDA-graph capture and replay, and abort while a collective waits for a peer.
// Without a GPU every test skips with the reason (ctest reports them as skipped).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "kernels/cuda/cuda_kernels.h"
#include "kernels/host/dtype.h"
#include "perf/perf_data.h"
#include "tests/gpu/gpu_support.h"

namespace tccl_test {
namespace {

#define CUDA_OK(x) ASSERT_EQ(cudaSuccess, (x)) << #x << ": " << cudaGetErrorString(cudaGetLastError())

// ---- the kernel alone ----

// Inputs: order-sensitive values (perf::FillInput) or raw random bits (NaN payloads, infinities,
// subnormals, signed zeros); every pointer offset by `shift` bytes from a 256-byte boundary.
void CheckTree(int n, tcclDataType_t dt, tcclRedOp_t op, size_t count, size_t shift, bool randomBits) {
  const size_t es = tccl::DtypeSize(dt), bytes = count * es;
  std::vector<std::vector<unsigned char>> host(n, std::vector<unsigned char>(bytes));
  std::mt19937_64 rng(count * 31 + n * 7 + dt * 131 + op);
  for (int r = 0; r < n; ++r) {
    if (randomBits)
      for (auto& b : host[r]) b = (unsigned char)rng();
    else
      perf::FillInput(host[r].data(), count, 0, dt, op, r, 12345);
  }
  std::vector<const void*> ins(n);
  for (int r = 0; r < n; ++r) ins[r] = host[r].data();
  std::vector<unsigned char> want(bytes), got(bytes);
  ASSERT_EQ(tcclSuccess, tcclReduceReference(ins.data(), n, want.data(), count, dt, op));
  char* dev = nullptr;
  const size_t stride = (bytes + 511) / 256 * 256;
  CUDA_OK(cudaMalloc(&dev, stride * (n + 1)));
  tccl::cuda::TreeInputs in;
  for (int r = 0; r < n; ++r) {
    in.in[r] = dev + r * stride + shift;
    CUDA_OK(cudaMemcpy(dev + r * stride + shift, host[r].data(), bytes, cudaMemcpyHostToDevice));
  }
  char* out = dev + n * stride + shift;
  CUDA_OK(cudaMemset(out, 0xA5, bytes));
  CUDA_OK(tccl::cuda::LaunchTreeReduce(in, n, out, count, dt, op, n, nullptr));
  CUDA_OK(cudaMemcpy(got.data(), out, bytes, cudaMemcpyDeviceToHost));
  CUDA_OK(cudaFree(dev));
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < count; ++i)
    if (memcmp(&got[i * es], &want[i * es], es) != 0 && bad++ == 0) first = i;
  EXPECT_EQ(bad, 0u) << "N=" << n << " " << tccl::DtypeName(dt) << " " << tccl::OpName(op) << " count=" << count
                     << " shift=" << shift << (randomBits ? " random bits" : "") << ": first at " << first;
}

TEST(GpuKernels, TreeReduceEqualsReferenceBitForBit) {
  TCCL_REQUIRE_GPU();
  for (int n : {1, 2, 3, 4, 5, 7, 8, 9, 13})
    for (int t = 0; t < tcclNumTypes; ++t)
      for (int o = 0; o < tcclNumOps; ++o)
        for (size_t count : {(size_t)1, (size_t)7, (size_t)1009, (size_t)70001}) {
          const size_t es = tccl::DtypeSize((tcclDataType_t)t);
          // 0: packs; an element: element loads; 1 byte: byte loads (when wider than a byte).
          for (size_t shift : {(size_t)0, es, (size_t)1}) {
            if (shift == 1 && es == 1 && count > 1009) continue;
            CheckTree(n, (tcclDataType_t)t, (tcclRedOp_t)o, count, shift, false);
            if (count == 1009) CheckTree(n, (tcclDataType_t)t, (tcclRedOp_t)o, count, shift, true);
          }
        }
}

// ---- ranks as threads on one device ----

struct DeviceRanks {
  explicit DeviceRanks(int n) : comms(n, nullptr), streams(n, nullptr) {
    std::vector<int> devs(n, 0);
    ok = tcclCommInitAll(comms.data(), n, devs.data()) == tcclSuccess;
    for (auto& s : streams) cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  }
  ~DeviceRanks() {
    for (auto c : comms)
      if (c) tcclCommDestroy(c);
    for (auto s : streams) cudaStreamDestroy(s);
  }
  // Runs f(rank) on one thread per rank.
  template <typename F>
  void Each(F f) {
    std::vector<std::thread> ts;
    for (int r = 0; r < (int)comms.size(); ++r)
      ts.emplace_back([&, r] {
        cudaSetDevice(0);
        f(r);
      });
    for (auto& t : ts) t.join();
  }
  std::vector<tcclComm_t> comms;
  std::vector<cudaStream_t> streams;
  bool ok = false;
};

class GpuThreadRanks : public ::testing::TestWithParam<int> {};

TEST_P(GpuThreadRanks, EveryCollectiveDtypeOpInAndOutOfPlace) {
  TCCL_REQUIRE_GPU();
  DeviceRanks ranks(GetParam());
  ASSERT_TRUE(ranks.ok) << tcclGetLastError(nullptr);
  int dev = -1;
  EXPECT_EQ(tcclSuccess, tcclCommCuDevice(ranks.comms[0], &dev));
  EXPECT_EQ(dev, 0);
  std::vector<std::vector<std::string>> failures(ranks.comms.size());
  ranks.Each([&](int r) {
    DeviceHooks hooks = CudaHooks(ranks.streams[r]);
    SweepOptions opt;
    opt.device = &hooks;
    opt.expectCanonical = true;
    opt.colls = {"all_reduce", "reduce_scatter", "all_gather", "broadcast", "reduce", "alltoall"};
    failures[r] = RunSweep(ranks.comms[r], opt);
  });
  for (size_t r = 0; r < failures.size(); ++r)
    for (size_t i = 0; i < failures[r].size() && i < 10; ++i) ADD_FAILURE() << "rank " << r << ": " << failures[r][i];
}

INSTANTIATE_TEST_SUITE_P(N, GpuThreadRanks, ::testing::Values(1, 2, 3, 4), ::testing::PrintToStringParamName());

// Every rank of a thread group arrives before any goes on.
class ThreadBarrier {
 public:
  explicit ThreadBarrier(int n) : n_(n) {}
  void ArriveAndWait() {
    std::unique_lock<std::mutex> lock(m_);
    const int generation = generation_;
    if (++arrived_ == n_) {
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
      return;
    }
    cv_.wait(lock, [&] { return generation_ != generation; });
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  const int n_;
  int arrived_ = 0, generation_ = 0;
};

// Slow kernel: the collective must wait for it (stream order) and the call must not.
__global__ void SlowFill(float* p, size_t n, float v, long long spinNs) {
  long long start = clock64();
  (void)start;
  for (long long t = 0; t < spinNs; t += 1000) __nanosleep(1000);
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) p[i] = v;
}

// The ranks are threads sharing one driver, so what one rank's thread does after its call can stall
// another's call. A copy to pageable host memory blocks its thread until the stream is done, and
// while it waited the graph test below once saw other threads wait for a driver lock. This test,
// which copied to a std::vector right after its call, failed 2 times in 80 runs on an H200
// (2026-11-26), a call taking 0.205 s, the slow kernel's time: we think a rank still in its call
// waited for its peer's copy. So every rank's call returns before any rank copies, and the copy goes
// to pinned memory allocated before the ranks start.
TEST(GpuStreams, CollectiveWaitsForEarlierWorkAndReturnsAtOnce) {
  TCCL_REQUIRE_GPU();
  const int N = 2;
  DeviceRanks ranks(N);
  ASSERT_TRUE(ranks.ok) << tcclGetLastError(nullptr);
  const size_t count = 1 << 16;
  std::vector<int> wrong(N, -1);
  std::vector<double> callSeconds(N, 0);
  ThreadBarrier called(N);
  std::vector<float*> hosts(N, nullptr);
  for (auto& h : hosts) ASSERT_EQ(cudaSuccess, cudaMallocHost(&h, count * sizeof(float)));
  ranks.Each([&](int r) {
    float* buf = nullptr;
    float* host = hosts[r];
    cudaMallocAsync(&buf, count * sizeof(float), ranks.streams[r]);
    cudaMemsetAsync(buf, 0, count * sizeof(float), ranks.streams[r]);
    SlowFill<<<64, 256, 0, ranks.streams[r]>>>(buf, count, (float)(r + 1), 200 * 1000 * 1000ll);
    auto t0 = std::chrono::steady_clock::now();
    tcclResult_t rc = tcclAllReduce(buf, buf, count, tcclFloat32, tcclSum, ranks.comms[r], ranks.streams[r]);
    callSeconds[r] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    called.ArriveAndWait();
    if (rc == tcclSuccess) {
      cudaMemcpyAsync(host, buf, count * sizeof(float), cudaMemcpyDeviceToHost, ranks.streams[r]);
      cudaStreamSynchronize(ranks.streams[r]);
      wrong[r] = 0;
      for (size_t i = 0; i < count; ++i) wrong[r] += host[i] != 3.0f;
    }
    cudaFreeAsync(buf, ranks.streams[r]);
    cudaStreamSynchronize(ranks.streams[r]);
  });
  for (auto h : hosts) cudaFreeHost(h);
  for (int r = 0; r < N; ++r) {
    EXPECT_EQ(wrong[r], 0) << "rank " << r << " (-1: the call failed)";
    EXPECT_LT(callSeconds[r], 0.1) << "rank " << r << ": tcclAllReduce waited for the stream";
  }
}

// Captured once, replayed with new inputs: graph replay must synchronise afresh every time.
//
// Ranks as threads of one process share the CUDA driver, and a rank's replay cannot finish until
// every rank has launched its own. On an H100 (2026-11-24) this test hung when one rank replayed
// while the others were still in cudaGraphInstantiate: those two waited for a driver lock
// (pthread_rwlock_wrlock) while the first sat in a blocking device-to-host copy to pageable memory
// behind its replay. So every rank instantiates before any rank launches (docs/gpu.md, "Ranks as
// threads and CUDA graphs"), and the copies go to pinned memory, where they are asynchronous and
// the waiting is done in cudaStreamSynchronize.
TEST(GpuGraphs, CapturedCollectivesReplayCorrectly) {
  TCCL_REQUIRE_GPU();
  const int N = 3;
  DeviceRanks ranks(N);
  ASSERT_TRUE(ranks.ok) << tcclGetLastError(nullptr);
  const size_t count = 4099;
  std::vector<std::string> errors(N);
  ThreadBarrier instantiated(N);
  ranks.Each([&](int r) {
    cudaStream_t s = ranks.streams[r];
    float *in = nullptr, *out = nullptr, *gathered = nullptr, *hostIn = nullptr, *hostAll = nullptr;
    cudaMallocAsync(&in, count * 4, s);
    cudaMallocAsync(&out, count * 4, s);
    cudaMallocAsync(&gathered, N * count * 4, s);
    if (cudaMallocHost(&hostIn, count * 4) != cudaSuccess || cudaMallocHost(&hostAll, N * count * 4) != cudaSuccess)
      errors[r] = "cudaMallocHost failed";
    cudaStreamSynchronize(s);
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    if (errors[r].empty() && cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) != cudaSuccess)
      errors[r] = "begin capture failed";
    if (errors[r].empty()) {
      tcclResult_t a = tcclAllReduce(in, out, count, tcclFloat32, tcclSum, ranks.comms[r], s);
      tcclResult_t b = tcclAllGather(out, gathered, count, tcclFloat32, ranks.comms[r], s);
      cudaError_t e = cudaStreamEndCapture(s, &graph);
      if (a != tcclSuccess || b != tcclSuccess || e != cudaSuccess)
        errors[r] = std::string("capture: ") + tcclGetLastError(ranks.comms[r]) + " / " + cudaGetErrorString(e);
    }
    if (errors[r].empty() && cudaGraphInstantiate(&exec, graph, 0) != cudaSuccess) errors[r] = "instantiate failed";
    // Every rank arrives, failed or not; a rank replays only if every rank has a graph to replay.
    instantiated.ArriveAndWait();
    bool everyoneReady = true;
    for (const std::string& e : errors) everyoneReady = everyoneReady && e.empty();
    instantiated.ArriveAndWait();  // every rank has read `errors` before any replay writes it
    size_t nodes = 0;
    if (graph) cudaGraphGetNodes(graph, nullptr, &nodes);
    if (getenv("TCCL_TEST_VERBOSE")) fprintf(stderr, "rank %d: captured %zu graph nodes\n", r, nodes);
    for (int iter = 0; everyoneReady && iter < 4; ++iter) {
      if (getenv("TCCL_TEST_VERBOSE")) fprintf(stderr, "rank %d: replay %d\n", r, iter);
      for (size_t i = 0; i < count; ++i) hostIn[i] = (float)(r + 1) * (iter + 1) + (float)i * 0.5f;
      cudaMemcpyAsync(in, hostIn, count * 4, cudaMemcpyHostToDevice, s);
      cudaGraphLaunch(exec, s);
      cudaMemcpyAsync(hostAll, gathered, N * count * 4, cudaMemcpyDeviceToHost, s);
      if (cudaStreamSynchronize(s) != cudaSuccess) {
        errors[r] = "replay failed";
        break;
      }
      for (size_t j = 0; j < N * count && errors[r].empty(); ++j) {
        size_t i = j % count;
        // The canonical tree over N=3: (x0 + x1) + x2, in float.
        float x0 = 1.0f * (iter + 1) + i * 0.5f, x1 = 2.0f * (iter + 1) + i * 0.5f, x2 = 3.0f * (iter + 1) + i * 0.5f;
        float want = (x0 + x1) + x2;
        if (hostAll[j] != want) errors[r] = "replay " + std::to_string(iter) + ": element " + std::to_string(j) + " is " +
                                            std::to_string(hostAll[j]) + ", expected " + std::to_string(want);
      }
    }
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
    cudaFreeAsync(in, s);
    cudaFreeAsync(out, s);
    cudaFreeAsync(gathered, s);
    cudaStreamSynchronize(s);
    cudaFreeHost(hostIn);
    cudaFreeHost(hostAll);
  });
  for (int r = 0; r < N; ++r) EXPECT_EQ(errors[r], "") << "rank " << r;
}

// Rank 1 never joins: rank 0's stream waits in the barrier until tcclCommAbort lets it through.
TEST(GpuFaults, AbortReleasesAStreamWaitingForAPeer) {
  TCCL_REQUIRE_GPU();
  DeviceRanks ranks(2);
  ASSERT_TRUE(ranks.ok) << tcclGetLastError(nullptr);
  float* buf = nullptr;
  cudaSetDevice(0);
  ASSERT_EQ(cudaSuccess, cudaMalloc(&buf, 1 << 20));
  ASSERT_EQ(tcclSuccess, tcclAllReduce(buf, buf, 1000, tcclFloat32, tcclSum, ranks.comms[0], ranks.streams[0]));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(cudaErrorNotReady, cudaStreamQuery(ranks.streams[0])) << "the all-reduce finished without its peer";
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(tcclSuccess, tcclCommAbort(ranks.comms[0]));
  ranks.comms[0] = nullptr;
  EXPECT_EQ(cudaSuccess, cudaStreamSynchronize(ranks.streams[0]));
  double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(waited, 5.0) << "the stream stayed blocked after tcclCommAbort";
  // The surviving rank learns of it: its communicator reports an error, its calls fail.
  tcclResult_t async = tcclSuccess;
  for (int i = 0; i < 200 && async == tcclSuccess; ++i) {
    tcclCommGetAsyncError(ranks.comms[1], &async);
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  EXPECT_NE(async, tcclSuccess) << "rank 1 was not told that rank 0 aborted";
  EXPECT_NE(tcclSuccess, tcclAllReduce(buf, buf, 1000, tcclFloat32, tcclSum, ranks.comms[1], ranks.streams[1]));
  cudaFree(buf);
}

TEST(GpuApi, HostPointerIsRejectedWithAClearError) {
  TCCL_REQUIRE_GPU();
  DeviceRanks ranks(1);
  ASSERT_TRUE(ranks.ok) << tcclGetLastError(nullptr);
  std::vector<float> host(16);
  EXPECT_EQ(tcclInvalidArgument, tcclAllReduce(host.data(), host.data(), 16, tcclFloat32, tcclSum, ranks.comms[0],
                                               ranks.streams[0]));
  EXPECT_NE(std::string(tcclGetLastError(nullptr)).find("not memory CUDA device"), std::string::npos)
      << tcclGetLastError(nullptr);
  float* dev = nullptr;
  cudaMalloc(&dev, 64);
  EXPECT_EQ(tcclInvalidUsage, tcclSend(dev, 4, tcclFloat32, 0, ranks.comms[0], ranks.streams[0]));
  cudaFree(dev);
}

}  // namespace
}  // namespace tccl_test
