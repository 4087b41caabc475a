// Soak: thousands of random collectives (every collective and dtype, sum/max/min, random sizes,
// in and out of place, send/recv rings), in rounds with a random N in 1..8 and a fresh set of
// communicators per round, ranks as threads. Inputs are small integers so every algorithm's
// result is exact and checkable element by element. Run under ASan/LSan in CI (.ci/run) to show
// the library runs leak-free; TCCL_SOAK_OPS (default 2000) and TCCL_SOAK_SEED control it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "kernels/host/dtype.h"
#include "kernels/host/half.h"
#include "tccl/tccl.h"

namespace {

enum class Coll { AllReduce, Reduce, Broadcast, AllGather, ReduceScatter, AllToAll, SendRecvRing, kCount };
const char* kCollNames[] = {"all_reduce", "reduce", "broadcast", "all_gather", "reduce_scatter", "alltoall", "sendrecv"};

struct Call {
  Coll coll;
  tcclDataType_t dt;
  tcclRedOp_t op;
  size_t count;
  int root;
  bool inPlace;
};

void Put(tcclDataType_t dt, void* base, size_t i, double v) {
  switch (dt) {
    case tcclInt8: static_cast<int8_t*>(base)[i] = (int8_t)v; break;
    case tcclUint8: static_cast<uint8_t*>(base)[i] = (uint8_t)v; break;
    case tcclInt32: static_cast<int32_t*>(base)[i] = (int32_t)v; break;
    case tcclUint32: static_cast<uint32_t*>(base)[i] = (uint32_t)v; break;
    case tcclInt64: static_cast<int64_t*>(base)[i] = (int64_t)v; break;
    case tcclUint64: static_cast<uint64_t*>(base)[i] = (uint64_t)v; break;
    case tcclFloat16: static_cast<uint16_t*>(base)[i] = tccl::FloatToHalf((float)v); break;
    case tcclBfloat16: static_cast<uint16_t*>(base)[i] = tccl::FloatToBf16((float)v); break;
    case tcclFloat32: static_cast<float*>(base)[i] = (float)v; break;
    case tcclFloat64: static_cast<double*>(base)[i] = v; break;
    default: break;
  }
}

double Get(tcclDataType_t dt, const void* base, size_t i) {
  switch (dt) {
    case tcclInt8: return static_cast<const int8_t*>(base)[i];
    case tcclUint8: return static_cast<const uint8_t*>(base)[i];
    case tcclInt32: return static_cast<const int32_t*>(base)[i];
    case tcclUint32: return static_cast<const uint32_t*>(base)[i];
    case tcclInt64: return (double)static_cast<const int64_t*>(base)[i];
    case tcclUint64: return (double)static_cast<const uint64_t*>(base)[i];
    case tcclFloat16: return tccl::HalfToFloat(static_cast<const uint16_t*>(base)[i]);
    case tcclBfloat16: return tccl::Bf16ToFloat(static_cast<const uint16_t*>(base)[i]);
    case tcclFloat32: return static_cast<const float*>(base)[i];
    case tcclFloat64: return static_cast<const double*>(base)[i];
    default: return 0;
  }
}

// Rank r's input element i: small integers, so sums of 8 fit every dtype exactly.
double Value(int r, size_t i) { return (double)((r * 3 + i) % 5 + 1); }

double Reduce(tcclRedOp_t op, int n, size_t i) {
  double acc = Value(0, i);
  for (int r = 1; r < n; ++r) {
    double v = Value(r, i);
    acc = op == tcclSum ? acc + v : op == tcclMax ? std::max(acc, v) : std::min(acc, v);
  }
  return acc;
}

// Runs one call on one rank and checks its result; returns "" or what went wrong.
std::string RunCall(tcclComm_t comm, int rank, int n, const Call& c) {
  const size_t es = tccl::DtypeSize(c.dt);
  const bool wide = c.coll == Coll::ReduceScatter || c.coll == Coll::AllToAll;  // send holds n*count
  const size_t sendElems = wide ? n * c.count : c.count;
  const size_t recvElems = (c.coll == Coll::AllGather || c.coll == Coll::AllToAll) ? n * c.count : c.count;
  std::vector<unsigned char> sendBuf(std::max<size_t>(1, sendElems) * es), recvBuf(std::max<size_t>(1, std::max(sendElems, recvElems)) * es, 0xAB);
  void* recv = recvBuf.data();
  void* send = sendBuf.data();
  if (c.inPlace) {
    if (c.coll == Coll::AllGather) send = recvBuf.data() + rank * c.count * es;
    else if (c.coll == Coll::ReduceScatter) { send = recvBuf.data(); recv = recvBuf.data() + rank * c.count * es; }
    else if (c.coll != Coll::SendRecvRing) send = recv;
  }
  for (size_t i = 0; i < sendElems; ++i) Put(c.dt, send, i, Value(rank, i));
  tcclResult_t rc = tcclSuccess;
  switch (c.coll) {
    case Coll::AllReduce: rc = tcclAllReduce(send, recv, c.count, c.dt, c.op, comm, nullptr); break;
    case Coll::Reduce: rc = tcclReduce(send, recv, c.count, c.dt, c.op, c.root, comm, nullptr); break;
    case Coll::Broadcast: rc = tcclBroadcast(send, recv, c.count, c.dt, c.root, comm, nullptr); break;
    case Coll::AllGather: rc = tcclAllGather(send, recv, c.count, c.dt, comm, nullptr); break;
    case Coll::ReduceScatter: rc = tcclReduceScatter(send, recv, c.count, c.dt, c.op, comm, nullptr); break;
    case Coll::AllToAll: rc = tcclAlltoAll(send, recv, c.count, c.dt, comm, nullptr); break;
    case Coll::SendRecvRing:
      tcclGroupStart();
      tcclSend(send, c.count, c.dt, (rank + 1) % n, comm, nullptr);
      tcclRecv(recv, c.count, c.dt, (rank + n - 1) % n, comm, nullptr);
      rc = tcclGroupEnd();
      break;
    default: break;
  }
  if (rc != tcclSuccess) return std::string("call failed: ") + tcclGetLastError(nullptr);
  for (size_t i = 0; i < recvElems; ++i) {
    double want;
    switch (c.coll) {
      case Coll::AllReduce: want = Reduce(c.op, n, i); break;
      case Coll::Reduce:
        if (rank != c.root) return "";
        want = Reduce(c.op, n, i);
        break;
      case Coll::Broadcast: want = Value(c.root, i); break;
      case Coll::AllGather: want = Value((int)(i / c.count), i % c.count); break;
      case Coll::ReduceScatter: want = Reduce(c.op, n, rank * c.count + i); break;
      case Coll::AllToAll: want = Value((int)(i / c.count), rank * c.count + i % c.count); break;
      case Coll::SendRecvRing: want = Value((rank + n - 1) % n, i); break;
      default: want = 0;
    }
    double got = Get(c.dt, recv, i);
    if (got != want)
      return "element " + std::to_string(i) + " is " + std::to_string(got) + ", expected " + std::to_string(want);
  }
  return "";
}

long EnvLong(const char* name, long fallback) {
  const char* v = getenv(name);
  return v && *v ? atol(v) : fallback;
}

TEST(Soak, ThousandsOfRandomCollectives) {
  const long ops = EnvLong("TCCL_SOAK_OPS", 2000);
  const unsigned seed = (unsigned)EnvLong("TCCL_SOAK_SEED", (long)std::random_device{}());
  printf("soak: %ld operations, TCCL_SOAK_SEED=%u\n", ops, seed);
  std::mt19937_64 rng(seed);
  long done = 0, round = 0;
  while (done < ops) {
    const int n = 1 + (int)(rng() % 8);
    const long perRound = std::min<long>(ops - done, 20 + (long)(rng() % 60));
    std::vector<Call> calls;
    for (long k = 0; k < perRound; ++k) {
      Call c;
      c.coll = (Coll)(rng() % (int)Coll::kCount);
      c.dt = (tcclDataType_t)(rng() % tcclNumTypes);
      const tcclRedOp_t ops3[] = {tcclSum, tcclMax, tcclMin};
      c.op = ops3[rng() % 3];
      unsigned sizeClass = rng() % 100;
      c.count = sizeClass < 70 ? rng() % 300 : sizeClass < 95 ? rng() % 20000 : rng() % 300000;
      c.root = (int)(rng() % n);
      c.inPlace = rng() % 2;
      calls.push_back(c);
    }
    std::vector<tcclComm_t> comms(n);
    ASSERT_EQ(tcclSuccess, tcclCommInitAll(comms.data(), n, nullptr)) << tcclGetLastError(nullptr);
    std::vector<std::string> failures(n);
    std::vector<std::thread> threads;
    for (int r = 0; r < n; ++r)
      threads.emplace_back([&, r] {
        for (size_t k = 0; k < calls.size() && failures[r].empty(); ++k) {
          std::string err = RunCall(comms[r], r, n, calls[k]);
          if (!err.empty()) {
            const Call& c = calls[k];
            failures[r] = std::string(kCollNames[(int)c.coll]) + " #" + std::to_string(k) + " (" + std::to_string(c.count) +
                          " x " + tccl::DtypeName(c.dt) + ", " + tccl::OpName(c.op) + ", root " + std::to_string(c.root) +
                          (c.inPlace ? ", in place" : "") + "): " + err;
          }
        }
      });
    for (auto& t : threads) t.join();
    for (int r = 0; r < n; ++r) {
      EXPECT_TRUE(failures[r].empty()) << "seed " << seed << " round " << round << " N=" << n << " rank " << r << ": "
                                       << failures[r];
      EXPECT_EQ(tcclSuccess, tcclCommDestroy(comms[r]));
    }
    if (::testing::Test::HasFailure()) return;
    done += perRound;
    ++round;
  }
  printf("soak: %ld operations in %ld rounds passed\n", done, round);
}

}  // namespace
