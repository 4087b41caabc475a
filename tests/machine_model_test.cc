// The machine model's cache file format (src/tuning/machine_model.h) and the rule drawn from its
// exchange rates (src/comm/exchanges_by_cma.h).
#include <gtest/gtest.h>
#include <sched.h>

#include <string>
#include <vector>

#include "comm/exchanges_by_cma.h"
#include "tuning/machine_model.h"
#include "tuning/pair_exchange.h"

namespace {

tccl::MachineModel Sample() {
  tccl::MachineModel m;
  m.hopUs = 0.22;
  m.switchUs = 0.56;
  m.copyCacheGBps = 53.5;
  m.copyMemGBps = 7.1;
  m.reduceCacheGBps = 29.1;
  m.reduceMemGBps = 5.1;
  m.cacheBytes = 2 << 20;
  m.cores = 2;
  m.exchangeCopiesGBps = 8.8;
  m.exchangeCmaGBps = 18.1;
  return m;
}

TEST(MachineModel, RoundTripsThroughItsFile) {
  const tccl::MachineModel m = Sample();
  tccl::MachineModel back;
  ASSERT_TRUE(tccl::MachineModel::Parse(m.Serialize(), &back).ok()) << m.Serialize();
  EXPECT_DOUBLE_EQ(back.hopUs, 0.22);
  EXPECT_EQ(back.cacheBytes, (size_t)2 << 20);
  EXPECT_EQ(back.cores, 2);
  EXPECT_DOUBLE_EQ(back.exchangeCopiesGBps, 8.8);
  EXPECT_DOUBLE_EQ(back.exchangeCmaGBps, 18.1);
}

// Exchange rates of 0 (not measured: one core, CMA refused) are valid; other values are not.
TEST(MachineModel, ExchangeRatesMayBeUnmeasured) {
  tccl::MachineModel m = Sample();
  m.exchangeCopiesGBps = m.exchangeCmaGBps = 0;
  tccl::MachineModel back;
  EXPECT_TRUE(tccl::MachineModel::Parse(m.Serialize(), &back).ok());
  m = Sample();
  m.hopUs = 0;
  EXPECT_FALSE(tccl::MachineModel::Parse(m.Serialize(), &back).ok());
}

// Files of older versions are not read, so the machine is measured again: version 1 (written
// before the exchange rates) and version 2 (the two copies measured through two staging slots,
// the same keys as now); so is a file missing a value.
TEST(MachineModel, OlderOrIncompleteFilesAreMeasuredAgain) {
  std::string text = Sample().Serialize();
  tccl::MachineModel back;
  ASSERT_TRUE(tccl::MachineModel::Parse(text, &back).ok()) << text;
  std::string v1 = text.substr(0, text.find("exchange_copies_gbps"));
  v1.replace(v1.find(" 3\n"), 3, " 1\n");
  EXPECT_FALSE(tccl::MachineModel::Parse(v1, &back).ok()) << v1;
  std::string v2 = text;
  v2.replace(v2.find(" 3\n"), 3, " 2\n");
  EXPECT_FALSE(tccl::MachineModel::Parse(v2, &back).ok()) << v2;
  std::string missing = text.substr(0, text.find("exchange_cma_gbps"));
  EXPECT_FALSE(tccl::MachineModel::Parse(missing, &back).ok()) << missing;
}

TEST(ExchangesByCma, WhereCmaBeatsTheTwoCopiesByTheMarginForAPairOrRanksSharingCores) {
  tccl::MachineModel m = Sample();
  EXPECT_TRUE(tccl::ExchangesByCma(m, 2));
  EXPECT_FALSE(tccl::ExchangesByCma(m, 1));  // no peer
  EXPECT_TRUE(tccl::ExchangesByCma(m, 3));   // ranks share the model's 2 cores
  EXPECT_TRUE(tccl::ExchangesByCma(m, 8));
  m.cores = 1;
  EXPECT_FALSE(tccl::ExchangesByCma(m, 2));  // a pair on one core: no exchange was measured
  m.cores = 16;
  EXPECT_TRUE(tccl::ExchangesByCma(m, 2));
  EXPECT_FALSE(tccl::ExchangesByCma(m, 4));  // a core each, but only pairs were measured
  EXPECT_FALSE(tccl::ExchangesByCma(m, 16));
  EXPECT_TRUE(tccl::ExchangesByCma(m, 17));
  m.cores = 2;
  m.exchangeCmaGBps = m.exchangeCopiesGBps * tccl::kExchangeByCmaMargin;
  EXPECT_TRUE(tccl::ExchangesByCma(m, 2));
  m.exchangeCmaGBps = m.exchangeCopiesGBps * tccl::kExchangeByCmaMargin * 0.99;
  EXPECT_FALSE(tccl::ExchangesByCma(m, 2));
  m.exchangeCopiesGBps = m.exchangeCmaGBps = 0;  // not measured
  EXPECT_FALSE(tccl::ExchangesByCma(m, 2));
}

TEST(ExchangesByCma, BroadcastFromItsThresholdToHalfTheMeasuredCache) {
  const size_t from = tccl::kSingleCopyBytesWhereBroadcastGoesByCma, cache = 2 << 20;
  EXPECT_FALSE(tccl::BroadcastByCma(true, 2, from - 1, cache));
  EXPECT_TRUE(tccl::BroadcastByCma(true, 2, from, cache));
  EXPECT_TRUE(tccl::BroadcastByCma(true, 2, cache / 2, cache));
  EXPECT_FALSE(tccl::BroadcastByCma(true, 2, cache / 2 + 1, cache));
  EXPECT_FALSE(tccl::BroadcastByCma(false, 2, 256 << 10, cache));  // exchanges go through the rings
  EXPECT_FALSE(tccl::BroadcastByCma(true, 2, from, 0));             // no cache measured
  EXPECT_FALSE(tccl::BroadcastByCma(true, 4, from, cache));         // three readers share the cores
}

// The measurement itself: both ways deliver a rate on two cores (where this process may use two),
// none on one core or with a block smaller than its message; the caller's affinity is untouched.
TEST(PairExchange, MeasuresBothWaysOnTwoCores) {
  EXPECT_EQ(tccl::MeasurePairExchangeGBps(tccl::ExchangeBy::TwoCopies, 0, 0, 256 << 10, 64 << 10, 8, 2), 0.0);
  EXPECT_EQ(tccl::MeasurePairExchangeGBps(tccl::ExchangeBy::Cma, 0, 1, 1000, 4096, 8, 2), 0.0);
  EXPECT_EQ(tccl::MeasurePairExchangeGBps(tccl::ExchangeBy::TwoCopies, 0, 1, 256 << 10, 64 << 10, 0, 2), 0.0);
  cpu_set_t before;
  ASSERT_EQ(0, sched_getaffinity(0, sizeof(before), &before));
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE && cpus.size() < 2; ++c)
    if (CPU_ISSET(c, &before)) cpus.push_back(c);
  if (cpus.size() < 2) GTEST_SKIP() << "this process may use one core";
  for (tccl::ExchangeBy how : {tccl::ExchangeBy::TwoCopies, tccl::ExchangeBy::Cma})
    for (size_t slots : {1, 2, 8})  // fewer slots than messages: slots are reused, the peer waited for
      EXPECT_GT(tccl::MeasurePairExchangeGBps(how, cpus[0], cpus[1], 256 << 10, 64 << 10, slots, 2), 0.0)
          << (how == tccl::ExchangeBy::Cma ? "by CMA" : "by two copies") << ", " << slots << " slots";
  const tccl::PairExchangeRates model = tccl::MeasurePairExchange(cpus[0], cpus[1]);  // the model's procedure
  EXPECT_GT(model.copiesGBps, 0.0);
  EXPECT_GT(model.cmaGBps, 0.0);
  cpu_set_t after;
  ASSERT_EQ(0, sched_getaffinity(0, sizeof(after), &after));
  EXPECT_TRUE(CPU_EQUAL(&before, &after));
}

}  // namespace
