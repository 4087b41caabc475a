// Probe: how should ranks that share ONE GPU from separate processes wait for
// each other?  Without MPS, contexts of different processes time-slice, so a
// kernel that spins on a peer's flag may hold the GPU until its slice ends.
// This measures, with two processes on one device, the cost of one barrier
// (each rank publishes a counter in its own IPC memory and waits for the
// peer's) done three ways:
//   memop : cuStreamWriteValue32 / cuStreamWaitValue32 (the front end waits)
//   spin  : a one-thread kernel that stores its flag and spins on the peer's
//   hostfn: cudaLaunchHostFunc callbacks over a shared host counter
// and the device-to-device copy rate and the rate of a kernel reading a
// peer's buffer through its IPC mapping.  Used to choose the design of
// transports/cuda_ipc (docs/gpu.md records the figures).
#include <cuda.h>
#include <cuda_runtime.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  std::fprintf(stderr, "rank %d: %s failed: %s\n", rank, #x, cudaGetErrorString(e_)); std::exit(1);} } while (0)
#define CKD(x) do { CUresult e_ = (x); if (e_ != CUDA_SUCCESS) { \
  std::fprintf(stderr, "rank %d: %s failed: %d\n", rank, #x, (int)e_); std::exit(1);} } while (0)

struct Shared {
  cudaIpcMemHandle_t flag[2];
  cudaIpcMemHandle_t data[2];
  std::atomic<int> ready[2];
  std::atomic<unsigned> host_counter[2];
  std::atomic<int> phase[2];
};

static void HostBarrier(Shared* s, int rank, int phase) {
  s->phase[rank].store(phase);
  while (s->phase[1 - rank].load() < phase) usleep(50);
}

__global__ void SpinBarrier(volatile unsigned* mine, volatile unsigned* peer, unsigned v) {
  *mine = v;
  __threadfence_system();
  while (*peer < v) {}
}

__global__ void ReadPeer(const float4* __restrict__ src, float4* __restrict__ dst, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    dst[i] = src[i];
}

struct HostArg { Shared* s; int rank; unsigned v; };
static void CUDART_CB HostFnBarrier(void* p) {
  HostArg* a = static_cast<HostArg*>(p);
  a->s->host_counter[a->rank].store(a->v);
  while (a->s->host_counter[1 - a->rank].load() < a->v) {}
}

static double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int main(int argc, char** argv) {
  const int iters = argc > 1 ? std::atoi(argv[1]) : 2000;
  const size_t bytes = 256ull << 20;
  Shared* s = static_cast<Shared*>(mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  std::memset(static_cast<void*>(s), 0, sizeof(Shared));
  int rank = fork() == 0 ? 1 : 0;
  CK(cudaSetDevice(0));
  CK(cudaFree(nullptr));
  using MemOp = CUresult (*)(CUstream, CUdeviceptr, cuuint32_t, unsigned);
  MemOp wait32 = nullptr, write32 = nullptr;
  cudaDriverEntryPointQueryResult q;
  CK(cudaGetDriverEntryPointByVersion("cuStreamWaitValue32", (void**)&wait32, 12000, cudaEnableDefault, &q));
  CK(cudaGetDriverEntryPointByVersion("cuStreamWriteValue32", (void**)&write32, 12000, cudaEnableDefault, &q));
  int memops = 0;
  CKD(cuDeviceGetAttribute(&memops, CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1, 0));
  unsigned* flag; void* data; void* local;
  CK(cudaMalloc(&flag, 4096)); CK(cudaMemset(flag, 0, 4096));
  CK(cudaMalloc(&data, bytes)); CK(cudaMemset(data, rank + 1, bytes));
  CK(cudaMalloc(&local, bytes));
  CK(cudaIpcGetMemHandle(&s->flag[rank], flag));
  CK(cudaIpcGetMemHandle(&s->data[rank], data));
  CK(cudaDeviceSynchronize());
  HostBarrier(s, rank, 1);
  unsigned* peer_flag; void* peer_data;
  CK(cudaIpcOpenMemHandle((void**)&peer_flag, s->flag[1 - rank], cudaIpcMemLazyEnablePeerAccess));
  CK(cudaIpcOpenMemHandle(&peer_data, s->data[1 - rank], cudaIpcMemLazyEnablePeerAccess));
  cudaStream_t st; CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  if (rank == 0) std::printf("stream mem ops attribute: %d\n", memops);
  unsigned v = 0;
  auto run = [&](const char* name, auto enqueue_one) {
    for (int w = 0; w < 50; ++w) enqueue_one(++v);
    CK(cudaStreamSynchronize(st));
    HostBarrier(s, rank, 10 + v);
    double t0 = Now();
    for (int i = 0; i < iters; ++i) enqueue_one(++v);
    double t_enq = Now() - t0;
    CK(cudaStreamSynchronize(st));
    double t = Now() - t0;
    if (rank == 0) std::printf("%-7s barrier: %8.2f us each (enqueue %.2f us each)\n", name, t / iters * 1e6, t_enq / iters * 1e6);
    HostBarrier(s, rank, 20 + v);
  };
  run("memop", [&](unsigned val) {
    CKD(write32((CUstream)st, (CUdeviceptr)flag, val, CU_STREAM_WRITE_VALUE_DEFAULT));
    CKD(wait32((CUstream)st, (CUdeviceptr)peer_flag, val, CU_STREAM_WAIT_VALUE_GEQ));
  });
  // 2.2 ms per barrier on an H100: off unless asked for (PROBE_SPIN=1).
  if (getenv("PROBE_SPIN")) run("spin", [&](unsigned val) { SpinBarrier<<<1, 1, 0, st>>>(flag, peer_flag, val); });
  // tccl's barrier (transports/cuda_ipc/stream_barrier.cc): set a flag in the peer's memory, wait
  // for the peer's in my own, clear it; two flag sets by parity.
  unsigned* peer_flags = peer_flag + 64;
  unsigned* my_flags = flag + 64;
  run("memop-remote", [&](unsigned val) {
    unsigned parity = val & 1;
    CKD(write32((CUstream)st, (CUdeviceptr)(peer_flags + parity), 1, CU_STREAM_WRITE_VALUE_DEFAULT));
    CKD(wait32((CUstream)st, (CUdeviceptr)(my_flags + parity), 1, CU_STREAM_WAIT_VALUE_GEQ));
    CKD(write32((CUstream)st, (CUdeviceptr)(my_flags + parity), 0, CU_STREAM_WRITE_VALUE_DEFAULT));
  });
  // The same with a small kernel between barriers (as a collective's round has).
  run("memop-remote+kernel", [&](unsigned val) {
    unsigned parity = val & 1;
    ReadPeer<<<1, 32, 0, st>>>((const float4*)peer_data, (float4*)local, 32);
    CKD(write32((CUstream)st, (CUdeviceptr)(peer_flags + parity), 1, CU_STREAM_WRITE_VALUE_DEFAULT));
    CKD(wait32((CUstream)st, (CUdeviceptr)(my_flags + parity), 1, CU_STREAM_WAIT_VALUE_GEQ));
    CKD(write32((CUstream)st, (CUdeviceptr)(my_flags + parity), 0, CU_STREAM_WRITE_VALUE_DEFAULT));
  });
  run("memop-own+kernel", [&](unsigned val) {
    ReadPeer<<<1, 32, 0, st>>>((const float4*)peer_data, (float4*)local, 32);
    CKD(write32((CUstream)st, (CUdeviceptr)flag, val, CU_STREAM_WRITE_VALUE_DEFAULT));
    CKD(wait32((CUstream)st, (CUdeviceptr)peer_flag, val, CU_STREAM_WAIT_VALUE_GEQ));
  });
  run("memop-own+memcpy", [&](unsigned val) {
    CK(cudaMemcpyAsync(local, data, 4096, cudaMemcpyDeviceToDevice, st));
    CKD(write32((CUstream)st, (CUdeviceptr)flag, val, CU_STREAM_WRITE_VALUE_DEFAULT));
    CKD(wait32((CUstream)st, (CUdeviceptr)peer_flag, val, CU_STREAM_WAIT_VALUE_GEQ));
  });
  static HostArg args[1 << 16];
  int next_arg = 0;
  unsigned hv = 0;
  run("hostfn", [&](unsigned) {
    HostArg* a = &args[next_arg++ % (1 << 16)];
    *a = HostArg{s, rank, ++hv};
    CK(cudaLaunchHostFunc(st, HostFnBarrier, a));
  });
  // Bandwidth: local D2D copy alone (rank 0), then both ranks reading the peer at once.
  cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  if (rank == 0) {
    for (int w = 0; w < 3; ++w) CK(cudaMemcpyAsync(local, data, bytes, cudaMemcpyDeviceToDevice, st));
    CK(cudaEventRecord(e0, st));
    for (int i = 0; i < 10; ++i) CK(cudaMemcpyAsync(local, data, bytes, cudaMemcpyDeviceToDevice, st));
    CK(cudaEventRecord(e1, st)); CK(cudaEventSynchronize(e1));
    float ms; CK(cudaEventElapsedTime(&ms, e0, e1));
    std::printf("cudaMemcpy D2D 256 MiB: %.1f GB/s (bytes read + written)\n", 2.0 * bytes * 10 / (ms * 1e-3) / 1e9);
    int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    ReadPeer<<<sms * 4, 512, 0, st>>>((const float4*)peer_data, (float4*)local, bytes / 16);
    CK(cudaEventRecord(e0, st));
    for (int i = 0; i < 10; ++i) ReadPeer<<<sms * 4, 512, 0, st>>>((const float4*)peer_data, (float4*)local, bytes / 16);
    CK(cudaEventRecord(e1, st)); CK(cudaEventSynchronize(e1));
    CK(cudaEventElapsedTime(&ms, e0, e1));
    std::printf("kernel copy from peer's IPC buffer, one rank: %.1f GB/s (read + written)\n", 2.0 * bytes * 10 / (ms * 1e-3) / 1e9);
  }
  HostBarrier(s, rank, 1000000);
  {
    int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    CK(cudaDeviceSynchronize());
    HostBarrier(s, rank, 1000001);
    double t0 = Now();
    for (int i = 0; i < 10; ++i) ReadPeer<<<sms * 4, 512, 0, st>>>((const float4*)peer_data, (float4*)local, bytes / 16);
    CK(cudaStreamSynchronize(st));
    HostBarrier(s, rank, 1000002);
    double t = Now() - t0;
    if (rank == 0) std::printf("both ranks copying from each other at once: %.1f GB/s total (read + written)\n", 2.0 * 2 * bytes * 10 / t / 1e9);
  }
  CK(cudaIpcCloseMemHandle(peer_flag)); CK(cudaIpcCloseMemHandle(peer_data));
  if (rank == 1) return 0;
  int status = 0; wait(&status);
  return WEXITSTATUS(status);
}
