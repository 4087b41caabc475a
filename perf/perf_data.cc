#include "perf/perf_data.h"

#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "core/hash.h"
#include "kernels/host/dtype.h"
#include "kernels/host/half.h"
#include "perf/reduced_blocks.h"

namespace perf {

namespace {

// The floating inputs: for every op but prod, +-(1 + f/1024) * 2^e with f the hash's low 10 bits,
// e = (h >> 10) % 18 - 8 (2^-8 .. 2^9) and the sign from bit 20; for prod 1 + ((h & 0xFF) - 128)/1024.
// The first is built from its bits rather than by arithmetic (the check generates N values per
// output element, and tables and multiplies were most of a check_matrix.sh run and of the
// sanitized sweeps); the value is exact either way, so the bits are the same
// (tests/perf_check_test.cc compares them with the arithmetic).
inline double SumInput(uint64_t h) {
  const uint64_t bits = ((h >> 20) & 1) << 63 | (uint64_t)(1023 - 8 + (h >> 10) % 18) << 52 | (h & 0x3FF) << 42;
  double v;
  memcpy(&v, &bits, sizeof(v));
  return v;
}
// The same value as a float16, which holds it exactly (10 fraction bits, exponents down to 2^-14).
inline uint16_t SumInputHalf(uint64_t h) {
  return (uint16_t)(((h >> 20) & 1) << 15 | (15 - 8 + (h >> 10) % 18) << 10 | (h & 0x3FF));
}

inline double FloatValue(uint64_t h, tcclRedOp_t op) {
  if (op == tcclProd) return 1.0 + ((double)(h & 0xFF) - 128.0) / 1024.0;
  return SumInput(h);
}

// Buffers may be deliberately unaligned: element access goes through memcpy.
template <typename T>
void Put(void* buf, size_t i, T v) {
  memcpy(static_cast<unsigned char*>(buf) + i * sizeof(T), &v, sizeof(T));
}
template <typename T>
T At(const void* buf, size_t i) {
  T v;
  memcpy(&v, static_cast<const unsigned char*>(buf) + i * sizeof(T), sizeof(T));
  return v;
}

// Each floating type's element as a double: one type per instantiation of the loops below, so
// the type is not switched on per element (those loops are most of a check_matrix.sh run).
struct Float32 {
  static double Value(const void* buf, size_t i) { return At<float>(buf, i); }
};
struct Float64 {
  static double Value(const void* buf, size_t i) { return At<double>(buf, i); }
};
struct Float16 {
  static double Value(const void* buf, size_t i) { return tccl::HalfToFloat(At<uint16_t>(buf, i)); }
};
struct Bfloat16 {
  static double Value(const void* buf, size_t i) { return tccl::Bf16ToFloat(At<uint16_t>(buf, i)); }
};

// Unit roundoff of each floating type, used for the #wrong bound.
double Epsilon(tcclDataType_t dt) {
  switch (dt) {
    case tcclFloat16: return std::ldexp(1.0, -11);
    case tcclBfloat16: return std::ldexp(1.0, -8);
    case tcclFloat32: return std::ldexp(1.0, -24);
    default: return std::ldexp(1.0, -53);
  }
}

constexpr size_t kBlock = 4096;

// How many of the n reduced elements in `got` lie outside the rounding bound around their exact
// value. The exact value in double: inputs have 11-bit mantissas within 2^-8..2^10, so sums are
// exact; the bound is that of N-1 operations plus the final rounding and the avg division.
template <class Type>
int64_t OutsideBound(const std::vector<std::vector<unsigned char>>& inputs, const unsigned char* got, size_t n,
                     tcclRedOp_t op, double epsilon, std::vector<double>& exact, std::vector<double>& mag) {
  const int nranks = (int)inputs.size();
  exact.assign(n, op == tcclProd ? 1.0 : 0.0);
  mag.assign(n, 0.0);
  for (int q = 0; q < nranks; ++q) {
    const void* in = inputs[q].data();
    if (op == tcclProd) {
      for (size_t k = 0; k < n; ++k) exact[k] *= Type::Value(in, k);
    } else {
      for (size_t k = 0; k < n; ++k) {
        const double x = Type::Value(in, k);
        exact[k] += x;
        mag[k] += std::fabs(x);
      }
    }
  }
  int64_t outside = 0;
  for (size_t k = 0; k < n; ++k) {
    double e = exact[k], m = op == tcclProd ? std::fabs(exact[k]) : mag[k];
    if (op == tcclAvg) e /= nranks, m /= nranks;
    const double bound = (nranks + 2) * epsilon * m + 1e-300;
    outside += !(std::fabs(Type::Value(got, k) - e) <= bound);
  }
  return outside;
}

int64_t OutsideBound(tcclDataType_t dt, const std::vector<std::vector<unsigned char>>& inputs,
                     const unsigned char* got, size_t n, tcclRedOp_t op, std::vector<double>& exact,
                     std::vector<double>& mag) {
  const double eps = Epsilon(dt);
  switch (dt) {
    case tcclFloat32: return OutsideBound<Float32>(inputs, got, n, op, eps, exact, mag);
    case tcclFloat64: return OutsideBound<Float64>(inputs, got, n, op, eps, exact, mag);
    case tcclFloat16: return OutsideBound<Float16>(inputs, got, n, op, eps, exact, mag);
    case tcclBfloat16: return OutsideBound<Bfloat16>(inputs, got, n, op, eps, exact, mag);
    default: return (int64_t)n;
  }
}

// Elements of a and b (n of es bytes each) whose bytes differ: one comparison of the whole block
// first, since a correct output has none.
int64_t ElementsDiffering(const unsigned char* a, const unsigned char* b, size_t n, size_t es) {
  if (memcmp(a, b, n * es) == 0) return 0;
  int64_t differ = 0;
  for (size_t k = 0; k < n; ++k) differ += memcmp(a + k * es, b + k * es, es) != 0;
  return differ;
}

}  // namespace

void FillInput(void* buf, size_t elems, size_t first, tcclDataType_t dt, tcclRedOp_t op, int rank, uint64_t seed) {
  const uint64_t base = tccl::Mix64(seed ^ tccl::Mix64((uint64_t)rank + 1)) + first;
  // One loop per type (not a switch per element): this runs for every rank's inputs of every
  // output element checked.
  auto h = [base](size_t i) { return tccl::Mix64(base + i); };
  switch (dt) {
    case tcclInt8: case tcclUint8:
      for (size_t i = 0; i < elems; ++i) Put<uint8_t>(buf, i, (uint8_t)h(i));
      break;
    case tcclInt32: case tcclUint32:
      for (size_t i = 0; i < elems; ++i) Put<uint32_t>(buf, i, (uint32_t)h(i));
      break;
    case tcclInt64: case tcclUint64:
      for (size_t i = 0; i < elems; ++i) Put<uint64_t>(buf, i, h(i));
      break;
    case tcclFloat32:
      for (size_t i = 0; i < elems; ++i) Put<float>(buf, i, (float)FloatValue(h(i), op));
      break;
    case tcclFloat64:
      for (size_t i = 0; i < elems; ++i) Put<double>(buf, i, FloatValue(h(i), op));
      break;
    case tcclFloat16:
      for (size_t i = 0; i < elems; ++i)
        Put<uint16_t>(buf, i, op == tcclProd ? tccl::FloatToHalf((float)FloatValue(h(i), op)) : SumInputHalf(h(i)));
      break;
    case tcclBfloat16:
      for (size_t i = 0; i < elems; ++i) Put<uint16_t>(buf, i, tccl::FloatToBf16((float)FloatValue(h(i), op)));
      break;
    default: break;
  }
}

CheckResult CheckOutput(const Coll& c, const void* out, const Shape& s, tcclDataType_t dt, tcclRedOp_t op, int rank,
                        int nranks, int root, uint64_t seed) {
  CheckResult res;
  if (!c.hasOutput(rank, root)) return res;
  const size_t es = tccl::DtypeSize(dt);
  const size_t outElems = s.recvElems;
  std::vector<std::vector<unsigned char>> inputs(c.reduces ? nranks : 1, std::vector<unsigned char>(kBlock * es));
  std::vector<const void*> ptrs(inputs.size());
  std::vector<unsigned char> ref(kBlock * es);
  std::vector<double> exactBuf, magBuf;
  const bool exact = !tccl::DtypeIsFloat(dt) || op == tcclMax || op == tcclMin;
  const unsigned char* o = static_cast<const unsigned char*>(out);
  for (size_t j0 = 0; j0 < outElems;) {
    Source src = c.source(rank, nranks, root, s, j0);
    // Extend the block while the sources stay contiguous.
    size_t n = 1;
    while (n < kBlock && j0 + n < outElems) {
      Source next = c.source(rank, nranks, root, s, j0 + n);
      if (next.rank != src.rank || next.index != src.index + n) break;
      ++n;
    }
    if (!c.reduces) {
      FillInput(inputs[0].data(), n, src.index, dt, op, src.rank, seed);
      const int64_t differ = ElementsDiffering(o + j0 * es, inputs[0].data(), n, es);
      res.wrong += differ;
      res.det += differ;
      j0 += n;
      continue;
    }
    const unsigned char* got = o + j0 * es;
    // A block another rank of this process checked, with the same bits: its result (reduced_blocks.h).
    const ReducedBlocks::Key key{(int)dt, (int)op, nranks, seed, src.index, n};
    std::shared_ptr<const ReducedBlock> known = ReducedBlocks::Shared().Find(key);
    if (known && memcmp(got, known->ref.data(), n * es) == 0) {
      res.wrong += known->outside;
      j0 += n;
      continue;
    }
    for (int q = 0; q < nranks; ++q) {
      FillInput(inputs[q].data(), n, src.index, dt, op, q, seed);
      ptrs[q] = inputs[q].data();
    }
    tcclReduceReference(ptrs.data(), nranks, ref.data(), n, dt, op);
    const int64_t differ = ElementsDiffering(got, ref.data(), n, es);
    const int64_t outside = exact ? differ : OutsideBound(dt, inputs, got, n, op, exactBuf, magBuf);
    res.det += differ;
    res.wrong += outside;
    // Shared only from an output with the reference's bits, whose count is then the reference's;
    // a rank with a wrong block leaves it to the next one.
    if (!known && differ == 0) {
      auto block = std::make_shared<ReducedBlock>();
      block->ref.assign(ref.data(), ref.data() + n * es);
      block->outside = outside;
      ReducedBlocks::Shared().Add(key, std::move(block));
    }
    j0 += n;
  }
  return res;
}

bool CheckMemo::Key::operator==(const Key& o) const {
  return coll == o.coll && count == o.count && sendElems == o.sendElems && recvElems == o.recvElems &&
         bytes == o.bytes && dt == o.dt && op == o.op && rank == o.rank && nranks == o.nranks && root == o.root &&
         seed == o.seed;
}

CheckResult CheckMemo::Check(const Coll& c, const void* out, const Shape& s, tcclDataType_t dt, tcclRedOp_t op,
                             int rank, int nranks, int root, uint64_t seed) {
  const Key key{&c, s.count, s.sendElems, s.recvElems, s.bytes, dt, op, rank, nranks, root, seed};
  const size_t n = s.recvElems * tccl::DtypeSize(dt);
  const unsigned char* o = static_cast<const unsigned char*>(out);
  if (valid_ && key == key_ && memcmp(bytes_.data(), o, n) == 0) return result_;
  result_ = CheckOutput(c, out, s, dt, op, rank, nranks, root, seed);
  key_ = key;
  bytes_.assign(o, o + n);
  valid_ = true;
  return result_;
}

}  // namespace perf
