// tessera-perf's output check (perf/perf_data.h): the remembered check answers only for the same
// arguments and the same bytes, so a run that differs from the last one is checked again.
#include <gtest/gtest.h>

#include <vector>

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

}  // namespace
