// tessera-perf's output check (perf/perf_data.h): the remembered check answers only for the same
// arguments and the same bytes, so a run that differs from the last one is checked again.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "core/hash.h"
#include "kernels/host/half.h"
#include "perf/perf_args.h"
#include "perf/perf_data.h"

namespace {

TEST(PerfCheck, MemoReusesAResultOnlyForTheSameBytes) {
  const perf::Coll* c = perf::FindColl("all_reduce");
  ASSERT_NE(c, nullptr);
  const int nranks = 3, rank = 1, root = 0;
  const size_t count = 1000;
  const uint64_t seed = 7;
  const perf::Shape s = c->shape(count * sizeof(float), sizeof(float), nranks);
  std::vector<std::vector<float>> in(nranks, std::vector<float>(count));
  std::vector<const void*> ptrs;
  for (int q = 0; q < nranks; ++q) {
    perf::FillInput(in[q].data(), count, 0, tcclFloat32, tcclSum, q, seed);
    ptrs.push_back(in[q].data());
  }
  std::vector<float> out(count);
  ASSERT_EQ(tcclSuccess, tcclReduceReference(ptrs.data(), nranks, out.data(), count, tcclFloat32, tcclSum));

  perf::CheckMemo memo;
  perf::CheckResult r = memo.Check(*c, out.data(), s, tcclFloat32, tcclSum, rank, nranks, root, seed);
  EXPECT_EQ(r.wrong, 0);
  EXPECT_EQ(r.det, 0);
  std::vector<float> other = out;  // the same bytes in another buffer, as an in-place run leaves them
  r = memo.Check(*c, other.data(), s, tcclFloat32, tcclSum, rank, nranks, root, seed);
  EXPECT_EQ(r.wrong, 0);
  other[500] += 1.0f;  // one element off: checked again, and found
  r = memo.Check(*c, other.data(), s, tcclFloat32, tcclSum, rank, nranks, root, seed);
  EXPECT_EQ(r.wrong, 1);
  EXPECT_EQ(r.det, 1);
  // The same bytes under another rank count are another check: this output is wrong for 2 ranks.
  const perf::Shape s2 = c->shape(count * sizeof(float), sizeof(float), 2);
  r = memo.Check(*c, out.data(), s2, tcclFloat32, tcclSum, rank, 2, root, seed);
  EXPECT_GT(r.wrong, 0);
}

// Ranks as threads share the reduced blocks they check (perf/perf_data.cc): a rank whose output
// differs from the block another rank checked is checked in full, whichever rank came first.
TEST(PerfCheck, RanksSharingReducedBlocksStillFindEveryWrongElement) {
  const perf::Coll* c = perf::FindColl("all_reduce");
  ASSERT_NE(c, nullptr);
  const int nranks = 4, root = 0;
  const size_t count = 10000;  // three blocks
  for (tcclDataType_t dt : {tcclFloat16, tcclInt32}) {
    const size_t es = dt == tcclFloat16 ? 2 : 4;
    const uint64_t seed = 99 + dt;
    const perf::Shape sd = c->shape(count * es, es, nranks);
    std::vector<std::vector<unsigned char>> in(nranks, std::vector<unsigned char>(count * es));
    std::vector<const void*> ptrs;
    for (int q = 0; q < nranks; ++q) {
      perf::FillInput(in[q].data(), count, 0, dt, tcclSum, q, seed);
      ptrs.push_back(in[q].data());
    }
    std::vector<unsigned char> good(count * es);
    ASSERT_EQ(tcclSuccess, tcclReduceReference(ptrs.data(), nranks, good.data(), count, dt, tcclSum));
    std::vector<unsigned char> bad = good;
    bad[5000 * es] ^= 0x40;  // one element off, in the middle block
    bad[(count - 1) * es] ^= 0x40;  // and one in the last
    perf::CheckResult r = perf::CheckOutput(*c, good.data(), sd, dt, tcclSum, 0, nranks, root, seed);
    EXPECT_EQ(r.wrong, 0);
    EXPECT_EQ(r.det, 0);
    r = perf::CheckOutput(*c, bad.data(), sd, dt, tcclSum, 1, nranks, root, seed);
    EXPECT_EQ(r.wrong, 2) << "dtype " << (int)dt;
    EXPECT_EQ(r.det, 2);
    r = perf::CheckOutput(*c, good.data(), sd, dt, tcclSum, 2, nranks, root, seed);
    EXPECT_EQ(r.wrong, 0);
    EXPECT_EQ(r.det, 0);
  }
}

// FillInput builds its floating inputs from bits (perf/perf_data.cc); they must be the values its
// header describes, computed here by arithmetic and rounded to each type: for every op but prod
// +-(1 + (h & 0x3FF)/1024) * 2^((h >> 10) % 18 - 8), negative where bit 20 of h is set; for prod
// 1 + ((h & 0xFF) - 128)/1024. h is the hash of the element's index, its rank and the seed.
TEST(PerfCheck, InputsAreTheDescribedValuesInEveryFloatingType) {
  const size_t count = 1 << 16, first = 12345;
  const int rank = 3;
  const uint64_t seed = 11;
  const uint64_t base = tccl::Mix64(seed ^ tccl::Mix64((uint64_t)rank + 1)) + first;
  for (tcclRedOp_t op : {tcclSum, tcclProd, tcclMax, tcclMin, tcclAvg}) {
    std::vector<double> want(count);
    for (size_t i = 0; i < count; ++i) {
      const uint64_t h = tccl::Mix64(base + i);
      want[i] = op == tcclProd ? 1.0 + ((double)(h & 0xFF) - 128.0) / 1024.0
                               : ((h >> 20) & 1 ? -1.0 : 1.0) * (1.0 + (double)(h & 0x3FF) / 1024.0) *
                                     std::ldexp(1.0, (int)((h >> 10) % 18) - 8);
    }
    std::vector<double> f64(count);
    std::vector<float> f32(count);
    std::vector<uint16_t> f16(count), bf16(count);
    perf::FillInput(f64.data(), count, first, tcclFloat64, op, rank, seed);
    perf::FillInput(f32.data(), count, first, tcclFloat32, op, rank, seed);
    perf::FillInput(f16.data(), count, first, tcclFloat16, op, rank, seed);
    perf::FillInput(bf16.data(), count, first, tcclBfloat16, op, rank, seed);
    int64_t differ = 0;
    for (size_t i = 0; i < count; ++i) {
      const float w = (float)want[i];
      differ += memcmp(&f64[i], &want[i], sizeof(double)) != 0;
      differ += memcmp(&f32[i], &w, sizeof(float)) != 0;
      differ += f16[i] != tccl::FloatToHalf(w);
      differ += bf16[i] != tccl::FloatToBf16(w);
    }
    EXPECT_EQ(differ, 0) << "op " << (int)op;
  }
}

// -d and -o take one name, "all" or a comma-separated list (one run checks several types, as
// perf/check_matrix.sh does); any unknown or empty item is refused, naming the value.
std::string Parse(std::vector<std::string> words, perf::Args* a) {
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  return perf::ParseArgs((int)argv.size(), argv.data(), a);
}

TEST(PerfArgs, TypeAndOpListsKeepTheirOrder) {
  perf::Args a;
  ASSERT_EQ("", Parse({"tessera-perf", "all_reduce", "-d", "double,half,int8", "-o", "max,sum"}, &a));
  EXPECT_EQ((std::vector<tcclDataType_t>{tcclFloat64, tcclFloat16, tcclInt8}), a.types);
  EXPECT_EQ((std::vector<tcclRedOp_t>{tcclMax, tcclSum}), a.ops);
  ASSERT_EQ("", Parse({"tessera-perf", "all_reduce", "-d", "bfloat16", "-o", "all"}, &a));
  EXPECT_EQ((std::vector<tcclDataType_t>{tcclBfloat16}), a.types);
  EXPECT_EQ((size_t)tcclNumOps, a.ops.size());
  ASSERT_EQ("", Parse({"tessera-perf", "all_reduce", "-d", "all"}, &a));
  EXPECT_EQ((size_t)tcclNumTypes, a.types.size());
}

TEST(PerfArgs, AnUnknownOrEmptyListItemIsRefused) {
  for (const char* bad : {"float,hlaf", "float,", ",float", "float,,half", "", "floa"}) {
    perf::Args a;
    EXPECT_EQ(std::string("unknown -d ") + bad, Parse({"tessera-perf", "all_reduce", "-d", bad}, &a)) << bad;
    EXPECT_EQ(std::string("unknown -o ") + bad, Parse({"tessera-perf", "all_reduce", "-o", bad}, &a)) << bad;
  }
}

}  // namespace
