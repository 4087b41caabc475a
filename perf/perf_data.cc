#include "perf/perf_data.h"

#include <array>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/hash.h"
#include "kernels/host/dtype.h"
#include "kernels/host/half.h"

namespace perf {

namespace {

// 2^-8 .. 2^9, the exponents FloatValue draws. A table rather than std::ldexp: the check computes
// N values per output element, and ldexp made up half of a check_matrix run at 8 ranks. Multiplying
// by a power of two is exact here (no overflow or underflow), so the values are the same.
const std::array<double, 18> kPowersOfTwo = [] {
  std::array<double, 18> t{};
  for (int i = 0; i < 18; ++i) t[i] = std::ldexp(1.0, i - 8);
  return t;
}();
const double kSigns[2] = {1.0, -1.0};

inline double FloatValue(uint64_t h, tcclRedOp_t op) {
  if (op == tcclProd) return 1.0 + ((double)(h & 0xFF) - 128.0) / 1024.0;
  double m = 1.0 + (double)(h & 0x3FF) / 1024.0;
  double scale = kPowersOfTwo[(h >> 10) % 18];
  return kSigns[(h >> 20) & 1] * m * scale;  // a table, not a branch: the bit is random
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

void Store(void* buf, size_t i, tcclDataType_t dt, uint64_t h, tcclRedOp_t op) {
  switch (dt) {
    case tcclInt8: case tcclUint8: Put<uint8_t>(buf, i, (uint8_t)h); break;
    case tcclInt32: case tcclUint32: Put<uint32_t>(buf, i, (uint32_t)h); break;
    case tcclInt64: case tcclUint64: Put<uint64_t>(buf, i, h); break;
    case tcclFloat32: Put<float>(buf, i, (float)FloatValue(h, op)); break;
    case tcclFloat64: Put<double>(buf, i, FloatValue(h, op)); break;
    case tcclFloat16: Put<uint16_t>(buf, i, tccl::FloatToHalf((float)FloatValue(h, op))); break;
    case tcclBfloat16: Put<uint16_t>(buf, i, tccl::FloatToBf16((float)FloatValue(h, op))); break;
    default: break;
  }
}

double AsDouble(const void* buf, size_t i, tcclDataType_t dt) {
  switch (dt) {
    case tcclFloat32: return At<float>(buf, i);
    case tcclFloat64: return At<double>(buf, i);
    case tcclFloat16: return tccl::HalfToFloat(At<uint16_t>(buf, i));
    case tcclBfloat16: return tccl::Bf16ToFloat(At<uint16_t>(buf, i));
    default: return 0;
  }
}

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

}  // namespace

void FillInput(void* buf, size_t elems, size_t first, tcclDataType_t dt, tcclRedOp_t op, int rank, uint64_t seed) {
  uint64_t base = tccl::Mix64(seed ^ tccl::Mix64((uint64_t)rank + 1));
  for (size_t i = 0; i < elems; ++i) Store(buf, i, dt, tccl::Mix64(base + first + i), op);
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
      for (size_t k = 0; k < n; ++k)
        if (memcmp(o + (j0 + k) * es, inputs[0].data() + k * es, es) != 0) ++res.wrong, ++res.det;
      j0 += n;
      continue;
    }
    for (int q = 0; q < nranks; ++q) {
      FillInput(inputs[q].data(), n, src.index, dt, op, q, seed);
      ptrs[q] = inputs[q].data();
    }
    tcclReduceReference(ptrs.data(), nranks, ref.data(), n, dt, op);
    for (size_t k = 0; k < n; ++k) {
      const unsigned char* got = o + (j0 + k) * es;
      bool same = memcmp(got, ref.data() + k * es, es) == 0;
      res.det += !same;
      if (exact) {
        res.wrong += !same;
        continue;
      }
      // Exact value in double (inputs have 11-bit mantissas within 2^-8..2^10: sums are exact) and
      // the rounding bound of N-1 operations plus the final rounding and the avg division.
      double exactVal = op == tcclProd ? 1.0 : 0.0, mag = 0;
      for (int q = 0; q < nranks; ++q) {
        double x = AsDouble(inputs[q].data(), k, dt);
        if (op == tcclProd) exactVal *= x;
        else exactVal += x, mag += std::fabs(x);
      }
      if (op == tcclProd) mag = std::fabs(exactVal);
      if (op == tcclAvg) exactVal /= nranks, mag /= nranks;
      double bound = (nranks + 2) * Epsilon(dt) * mag + 1e-300;
      double g = AsDouble(got, 0, dt);
      if (!(std::fabs(g - exactVal) <= bound)) ++res.wrong;
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
