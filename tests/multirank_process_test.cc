// Ranks as processes: run under `tessera-run -n N` (see tests/CMakeLists.txt). Every process runs
// the same GoogleTest cases; a failure in any rank fails the job through tessera-run's exit status.
#include <gtest/gtest.h>

#include "tests/support/sweep.h"

namespace tccl_test {
namespace {

class ProcessRanks : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(tcclSuccess, tcclCommInitFromEnv(&comm_, nullptr)) << tcclGetLastError(nullptr);
  }
  void TearDown() override {
    if (comm_) {
      EXPECT_EQ(tcclSuccess, tcclCommDestroy(comm_));
    }
  }
  tcclComm_t comm_ = nullptr;
};

// Strict determinism (the default) across processes: every reduction equals tcclReduceReference.
TEST_F(ProcessRanks, FullSweepStrict) {
  SweepOptions opt;
  opt.expectCanonical = true;
  std::vector<std::string> failures = RunSweep(comm_, opt);
  int rank = -1;
  tcclCommUserRank(comm_, &rank);
  for (size_t i = 0; i < failures.size() && i < 10; ++i) ADD_FAILURE() << "rank " << rank << ": " << failures[i];
}

TEST_F(ProcessRanks, SplitIntoHalvesAndRunOnEach) {
  int rank = 0, n = 1;
  tcclCommUserRank(comm_, &rank);
  tcclCommCount(comm_, &n);
  tcclComm_t half = nullptr;
  // Reverse order inside each half via the key, to check that keys order the new ranks.
  ASSERT_EQ(tcclSuccess, tcclCommSplit(comm_, rank % 2, n - rank, &half, nullptr)) << tcclGetLastError(comm_);
  ASSERT_NE(half, nullptr);
  int hr = -1, hn = 0;
  tcclCommUserRank(half, &hr);
  tcclCommCount(half, &hn);
  EXPECT_EQ(hn, (n + (rank % 2 == 0)) / 2);
  SweepOptions opt;
  opt.types = {tcclFloat32, tcclInt64};
  opt.largeCounts = {};
  opt.expectCanonical = true;
  std::vector<std::string> failures = RunSweep(half, opt);
  for (size_t i = 0; i < failures.size() && i < 10; ++i) ADD_FAILURE() << "split rank " << hr << ": " << failures[i];
  EXPECT_EQ(tcclSuccess, tcclCommDestroy(half));
}

}  // namespace
}  // namespace tccl_test

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  // Only rank 0 prints the full GoogleTest report; failures are printed by whichever rank has them.
  const char* rank = getenv("RANK");
  if (rank && std::string(rank) != "0") {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    struct FailurePrinter : ::testing::EmptyTestEventListener {
      void OnTestPartResult(const ::testing::TestPartResult& r) override {
        if (r.failed()) fprintf(stderr, "%s:%d: Failure\n%s\n", r.file_name(), r.line_number(), r.summary());
      }
    };
    listeners.Append(new FailurePrinter);
  }
  return RUN_ALL_TESTS();
}
