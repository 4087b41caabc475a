#include "tests/support/sweep.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sstream>

#include "kernels/host/dtype.h"
#include "perf/perf_colls.h"
#include "perf/perf_data.h"

namespace tccl_test {

namespace {

std::string Describe(const perf::Coll& c, size_t count, tcclDataType_t dt, tcclRedOp_t op, int root, bool inPlace,
                     bool mixed) {
  std::ostringstream o;
  o << c.name << " count=" << count << " " << tccl::DtypeName(dt);
  if (c.reduces) o << " " << tccl::OpName(op);
  if (c.rooted) o << " root=" << root;
  o << (inPlace ? " in-place" : " out-of-place");
  if (mixed) o << " (even ranks in place, odd ranks out of place)";
  return o.str();
}

// One host buffer of the sweep: a vector, tcclMemAlloc memory, or a vector registered with the
// communicator. data() is null when allocation or registration failed.
class HostStore {
 public:
  HostStore(HostBuffers kind, size_t bytes, tcclComm_t comm) : comm_(comm), bytes_(bytes) {
    if (kind == HostBuffers::MemAlloc) {
      void* p = nullptr;
      if (tcclMemAlloc(&p, bytes) == tcclSuccess) shared_ = static_cast<unsigned char*>(p);
      return;
    }
    vec_.resize(bytes);
    if (kind == HostBuffers::Registered && tcclCommRegister(comm, vec_.data(), bytes, &handle_) != tcclSuccess)
      vec_.clear();
  }
  ~HostStore() {
    if (handle_) tcclCommDeregister(comm_, handle_);
    if (shared_) tcclMemFree(shared_);
  }
  HostStore(const HostStore&) = delete;
  HostStore& operator=(const HostStore&) = delete;
  unsigned char* data() { return shared_ ? shared_ : vec_.empty() ? nullptr : vec_.data(); }
  size_t size() const { return bytes_; }
  unsigned char& operator[](size_t i) { return data()[i]; }

 private:
  tcclComm_t comm_;
  size_t bytes_;
  std::vector<unsigned char> vec_;
  unsigned char* shared_ = nullptr;
  void* handle_ = nullptr;
};

}  // namespace

bool QuickSweep() {
  const char* mode = getenv("TCCL_TEST_SWEEP");
  return mode && std::string(mode) == "quick";
}

std::vector<std::string> RunSweep(tcclComm_t comm, const SweepOptions& opt) {
  std::vector<std::string> failures;
  tcclStream_t stream = nullptr;
  if (opt.useStream && tcclStreamCreate(&stream) != tcclSuccess) return {"tcclStreamCreate failed"};
  auto run = [&](const perf::Coll& c, const void* send, void* recv, const perf::Shape& s, tcclDataType_t dt,
                 tcclRedOp_t op, int root) {
    tcclResult_t rc = c.run(send, recv, s, dt, op, root, comm, stream);
    if (rc == tcclSuccess && stream) rc = tcclStreamSynchronize(stream);
    return rc;
  };
  struct StreamCloser {
    tcclStream_t s;
    ~StreamCloser() {
      if (s) tcclStreamDestroy(s);
    }
  } closer{stream};
  int rank = 0, n = 1;
  tcclCommUserRank(comm, &rank);
  tcclCommCount(comm, &n);
  std::vector<tcclDataType_t> types = opt.types;
  if (types.empty())
    for (int t = 0; t < tcclNumTypes; ++t) types.push_back((tcclDataType_t)t);
  size_t ncolls = 0;
  const perf::Coll* colls = perf::AllColls(&ncolls);
  for (size_t ci = 0; ci < ncolls; ++ci) {
    const perf::Coll& c = colls[ci];
    if (!opt.colls.empty() && std::find(opt.colls.begin(), opt.colls.end(), c.name) == opt.colls.end()) continue;
    std::vector<std::pair<size_t, tcclDataType_t>> cases;
    for (size_t count : opt.counts)
      for (tcclDataType_t dt : types) cases.emplace_back(count, dt);
    // TCCL_TEST_SWEEP=quick (sanitizer builds in .ci/run, where every access is instrumented):
    // large counts shrink to opt.quickLargeCount (64 Ki elements unless the test says otherwise),
    // still several slices per rank, still unaligned.
    const bool quick = QuickSweep();
    for (size_t count : opt.largeCounts)
      for (tcclDataType_t dt : opt.largeTypes) cases.emplace_back(quick ? std::min(count, opt.quickLargeCount) : count, dt);
    for (auto [count, dt] : cases) {
      bool large = count > 100000;
      std::vector<tcclRedOp_t> ops = {tcclSum};
      if (c.reduces && !large) ops = {tcclSum, tcclProd, tcclMax, tcclMin, tcclAvg};
      const size_t es = tccl::DtypeSize(dt);
      perf::Shape s = c.shape(perf::BytesForCount(c, count, es, n), es, n);
      // Roots vary with the count so every position of the root in the chain is exercised.
      int root = c.rooted ? (int)(count % n) : 0;
      const size_t off = opt.unaligned ? 1 : 0;
      size_t elems = std::max(s.sendElems, s.recvElems);
      HostStore sendStore(opt.buffers, elems * es + 16, comm), recvStore(opt.buffers, elems * es + 16, comm);
      if (!sendStore.data() || !recvStore.data())
        return {"cannot allocate or register host buffers: " + std::string(tcclGetLastError(comm))};
      // Device copies of the two stores (same offsets), for CUDA communicators.
      void *dSend = nullptr, *dRecv = nullptr;
      struct DeviceFree {
        const DeviceHooks* h;
        void** a;
        void** b;
        ~DeviceFree() {
          if (h && *a) h->release(*a);
          if (h && *b) h->release(*b);
        }
      } deviceFree{opt.device, &dSend, &dRecv};
      auto onDevice = [&](const void* p) -> void* {
        auto* b = static_cast<const unsigned char*>(p);
        if (!p) return nullptr;
        if (b >= sendStore.data() && b < sendStore.data() + sendStore.size())
          return static_cast<unsigned char*>(dSend) + (b - sendStore.data());
        return static_cast<unsigned char*>(dRecv) + (b - recvStore.data());
      };
      auto runOn = [&](const perf::Coll& cc, const void* send, void* recv, const perf::Shape& sh, tcclDataType_t t,
                       tcclRedOp_t o, int rt) -> tcclResult_t {
        if (!opt.device) return run(cc, send, recv, sh, t, o, rt);
        opt.device->toDevice(dSend, sendStore.data(), sendStore.size());
        opt.device->toDevice(dRecv, recvStore.data(), recvStore.size());
        tcclResult_t rc = cc.run(onDevice(send), onDevice(recv), sh, t, o, rt, comm, opt.device->stream);
        if (rc == tcclSuccess) rc = opt.device->sync(opt.device->stream);
        opt.device->toHost(recvStore.data(), dRecv, recvStore.size());
        return rc;
      };
      for (tcclRedOp_t op : ops) {
        // 0: every rank out of place, 1: every rank in place, 2: even ranks in place (mixInPlace).
        for (int mode = 0; mode < (opt.mixInPlace ? 3 : 2); ++mode) {
          if (mode && std::string(c.name) == "sendrecv") continue;
          if (opt.inPlaceOnly && mode != 1) continue;
          const bool inPlace = mode == 1 || (mode == 2 && rank % 2 == 0);
          uint64_t seed = count * 7919 + dt * 131 + op * 17 + mode;  // the same on every rank
          void *send = nullptr, *recv = nullptr;
          auto prepare = [&] {
            memset(recvStore.data(), 0xA5, recvStore.size());
            if (inPlace) {
              perf::InPlacePointers(c, recvStore.data() + off, es, rank, s, &send, &recv);
            } else {
              send = sendStore.data() + off;
              recv = recvStore.data() + off;
            }
            bool hasInput = !(std::string(c.name) == "broadcast" && rank != root);
            if (hasInput) perf::FillInput(send, s.sendElems, 0, dt, op, rank, seed);
          };
          std::string what = Describe(c, count, dt, op, root, inPlace, mode == 2);
          if (opt.device) {
            if (!dSend) {
              dSend = opt.device->alloc(sendStore.size());
              dRecv = opt.device->alloc(recvStore.size());
            }
            if (!dSend || !dRecv) return {what + ": device allocation failed"};
          }
          prepare();
          tcclResult_t rc = runOn(c, send, recv, s, dt, op, root);
          if (rc != tcclSuccess) {
            failures.push_back(what + ": " + tcclGetErrorString(rc) + ": " + tcclGetLastError(comm));
            return failures;  // the ranks may now disagree about what comes next
          }
          perf::CheckResult r = perf::CheckOutput(c, recv, s, dt, op, rank, n, root, seed);
          bool exactType = !tccl::DtypeIsFloat(dt) || op == tcclMax || op == tcclMin || !c.reduces;
          if (r.wrong) failures.push_back(what + ": " + std::to_string(r.wrong) + " wrong elements");
          if (r.det && (exactType || opt.expectCanonical))
            failures.push_back(what + ": " + std::to_string(r.det) + " elements differ from tcclReduceReference");
          if (c.reduces && !exactType && opt.checkRepeatable && c.hasOutput(rank, root)) {
            std::vector<unsigned char> first(s.recvElems * es);
            if (!first.empty()) memcpy(first.data(), recv, first.size());
            prepare();
            rc = runOn(c, send, recv, s, dt, op, root);
            if (rc != tcclSuccess || (!first.empty() && memcmp(first.data(), recv, first.size()) != 0))
              failures.push_back(what + ": a repeated call gave different bits");
          } else if (c.reduces && !exactType && opt.checkRepeatable) {
            prepare();
            runOn(c, send, recv, s, dt, op, root);  // keep every rank in step
          }
          // Guard bytes around the output must be untouched.
          if (!inPlace && opt.unaligned && recvStore[0] != 0xA5)
            failures.push_back(what + ": wrote before the start of recvbuff");
          if (!inPlace && recvStore[off + s.recvElems * es] != 0xA5)
            failures.push_back(what + ": wrote past the end of recvbuff");
        }
      }
    }
  }
  return failures;
}

}  // namespace tccl_test
