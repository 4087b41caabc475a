#include "bootstrap/bootstrap.h"

#include <cstring>

#include "bootstrap/store_protocol.h"

namespace tccl {

Status Bootstrap::AllGather(const std::string& mine, std::vector<std::string>* all) {
  Deadline deadline = Deadline::After(timeoutSec_);
  std::string base = ns_ + "/ag" + std::to_string(seq_++) + "/";
  TCCL_RETURN_IF_ERROR(store_->Set(base + std::to_string(rank_), mine, deadline));
  all->assign(nranks_, std::string());
  for (int r = 0; r < nranks_; ++r) {
    if (r == rank_) {
      (*all)[r] = mine;
      continue;
    }
    Status st = store_->Get(base + std::to_string(r), deadline, &(*all)[r]);
    if (!st.ok())
      return Status(st.code(), "bootstrap all-gather: rank " + std::to_string(r) + " of " +
                                   std::to_string(nranks_) + " did not answer: " + st.message());
    const std::string& got = (*all)[r];
    const size_t prefix = strlen(kStoreFailedPrefix);
    if (got.compare(0, prefix, kStoreFailedPrefix) == 0)
      return RemoteError("bootstrap all-gather: %s", got.c_str() + prefix);
  }
  return Status::Ok();
}

void Bootstrap::Abandon(StoreClient& store, const std::string& ns, const std::string& reason,
                        const Deadline& deadline) {
  (void)store.Set(ns + "/" + kStoreFailedKey, kStoreFailedPrefix + reason, deadline);
}

Status Bootstrap::Barrier() {
  std::vector<std::string> ignored;
  return AllGather("", &ignored);
}

}  // namespace tccl
