// The bootstrap over its store: a rank that will not come abandons its communicator's namespace,
// and every rank waiting there, now or later, learns it at once with the reason (not at its
// deadline); other namespaces are untouched; the first reason stays.
#include <gtest/gtest.h>
#include <netinet/in.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "bootstrap/bootstrap.h"
#include "bootstrap/store_client.h"
#include "bootstrap/store_server.h"

namespace tccl {
namespace {

class BootstrapStore : public ::testing::Test {
 protected:
  void SetUp() override {
    memset(secret_, 7, sizeof(secret_));
    ASSERT_TRUE(StartStoreServer(htonl(INADDR_LOOPBACK), 0, secret_, &bound_).ok());
  }
  std::shared_ptr<StoreClient> Client() {
    std::shared_ptr<StoreClient> c;
    Status st = StoreClient::Connect(bound_, secret_, Deadline::After(10), &c);
    EXPECT_TRUE(st.ok()) << st.message();
    return c;
  }
  static double Since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  uint8_t secret_[16];
  SockAddr bound_;
};

TEST_F(BootstrapStore, AbandonedNamespaceFailsEveryWaiterAtOnceWithTheReason) {
  auto waiting = Client(), failing = Client(), late = Client(), other = Client();
  // Rank 0 of 3 waits in the all-gather for ranks 1 and 2; rank 1 abandons the namespace.
  Bootstrap rank0(waiting, "cA", 0, 3, /*timeoutSec=*/30);
  Status gathered;
  double took = 0;
  std::thread t([&] {
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::string> all;
    gathered = rank0.AllGather("zero", &all);
    took = Since(t0);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  Bootstrap::Abandon(*failing, "cA", "rank 1 of 3 (host h, pid 1) could not join: first", Deadline::After(5));
  Bootstrap::Abandon(*failing, "cA", "rank 2 of 3 (host h, pid 2) could not join: second", Deadline::After(5));
  t.join();
  EXPECT_EQ(gathered.code(), tcclRemoteError);
  EXPECT_EQ(gathered.message(), "bootstrap all-gather: rank 1 of 3 (host h, pid 1) could not join: first");
  EXPECT_LT(took, 5.0);  // not the 30 s deadline

  // A rank arriving later fails at once too, with the first reason.
  Bootstrap rank2(late, "cA", 2, 3, 30);
  std::vector<std::string> all;
  const auto t0 = std::chrono::steady_clock::now();
  Status st = rank2.AllGather("two", &all);
  EXPECT_EQ(st.code(), tcclRemoteError);
  EXPECT_NE(st.message().find("could not join: first"), std::string::npos) << st.message();
  EXPECT_LT(Since(t0), 5.0);

  // Another communicator's namespace on the same store is untouched: its keys still wait.
  std::string value;
  EXPECT_EQ(other->Get("cB/ag0/1", Deadline::After(0.3), &value).code(), tcclTimeout);
}

// Waiters on different keys of one namespace, two on one of them, pending when it is abandoned:
// every one is answered with the reason.
TEST_F(BootstrapStore, AbandonmentAnswersEveryPendingKeyOfTheNamespace) {
  const std::vector<std::string> keys = {"cD/ag0/1", "cD/ag0/1", "cD/ag0/2", "cD/tune/x"};
  std::vector<std::shared_ptr<StoreClient>> clients;
  for (size_t i = 0; i < keys.size(); ++i) clients.push_back(Client());
  std::vector<Status> got(keys.size());
  std::vector<std::string> values(keys.size());
  std::vector<std::thread> waiters;
  for (size_t i = 0; i < keys.size(); ++i)
    waiters.emplace_back([&, i] { got[i] = clients[i]->Get(keys[i], Deadline::After(10), &values[i]); });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  Bootstrap::Abandon(*Client(), "cD", "rank 3 of 4 (host h, pid 3) could not join: why", Deadline::After(5));
  for (std::thread& t : waiters) t.join();
  for (size_t i = 0; i < keys.size(); ++i) {
    EXPECT_TRUE(got[i].ok()) << keys[i] << ": " << got[i].message();
    EXPECT_NE(values[i].find("could not join: why"), std::string::npos) << keys[i] << ": " << values[i];
  }
}

// Every rank that was there has left after an abandonment (the waiters answered, the abandoning
// rank gone) before the last rank connects — a slow thread or process. The server stays up for it
// and it fails at once with the reason, instead of being refused until its deadline (CI saw this
// under ASan: Api.ARankThatCannotJoinFailsTheOthersAtOnce, 30 s of "connection refused").
TEST_F(BootstrapStore, ARankArrivingAfterEveryoneLeftAnAbandonedNamespaceStillGetsTheReason) {
  {
    auto waiting = Client(), failing = Client();
    Bootstrap rank0(waiting, "cE", 0, 3, 30);
    Status gathered;
    std::thread t([&] {
      std::vector<std::string> all;
      gathered = rank0.AllGather("zero", &all);
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    Bootstrap::Abandon(*failing, "cE", "rank 1 of 3 (host h, pid 1) could not join: gone", Deadline::After(5));
    t.join();
    EXPECT_EQ(gathered.code(), tcclRemoteError);
  }
  // Both connections are closed now; the server checks for clients at least once a second.
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  std::shared_ptr<StoreClient> late;
  Status st = StoreClient::Connect(bound_, secret_, Deadline::After(2), &late);
  ASSERT_TRUE(st.ok()) << st.message();
  Bootstrap rank2(late, "cE", 2, 3, 30);
  std::vector<std::string> all;
  const auto t0 = std::chrono::steady_clock::now();
  st = rank2.AllGather("two", &all);
  EXPECT_EQ(st.code(), tcclRemoteError);
  EXPECT_NE(st.message().find("could not join: gone"), std::string::npos) << st.message();
  EXPECT_LT(Since(t0), 5.0);
}

TEST_F(BootstrapStore, WithoutAbandonmentTheAllGatherCompletes) {
  auto a = Client(), b = Client();
  Bootstrap r0(a, "cC", 0, 2, 30), r1(b, "cC", 1, 2, 30);
  std::vector<std::string> all0, all1;
  Status s1;
  std::thread t([&] { s1 = r1.AllGather("one", &all1); });
  Status s0 = r0.AllGather("zero", &all0);
  t.join();
  ASSERT_TRUE(s0.ok()) << s0.message();
  ASSERT_TRUE(s1.ok()) << s1.message();
  EXPECT_EQ(all0, (std::vector<std::string>{"zero", "one"}));
  EXPECT_EQ(all1, all0);
}

}  // namespace
}  // namespace tccl
