#include "comm/local_rings.h"

#include <algorithm>

namespace tccl {

namespace {

// The ranks of the host other than `from` among those added, each once.
class LocalPeers {
 public:
  LocalPeers(const std::vector<int>& sameHost, int from) : sameHost_(sameHost), from_(from) {}
  void Add(int peer) {
    if (peer == from_ || !std::binary_search(sameHost_.begin(), sameHost_.end(), peer)) return;
    if (std::find(seen_.begin(), seen_.end(), peer) == seen_.end()) seen_.push_back(peer);
  }
  size_t count() const { return seen_.size(); }

 private:
  const std::vector<int>& sameHost_;
  const int from_;
  std::vector<int> seen_;
};

}  // namespace

size_t LocalRingsWritten(const AlgorithmInfo& alg, CollArgs a, const std::vector<int>& sameHost) {
  size_t rings = 0;
  for (int r : sameHost) {
    a.rank = r;
    const Schedule s = alg.generate(a);
    LocalPeers to(sameHost, r);
    for (const Step& step : s.steps)
      for (const Op& o : step.ops)
        if (o.kind == OpKind::Send) to.Add(o.peer);
    rings += to.count();
  }
  return rings;
}

size_t LocalRingsWritten(const std::vector<P2POp>& ops, int me, const std::vector<int>& sameHost) {
  LocalPeers to(sameHost, me);
  for (const P2POp& op : ops)
    if (op.send) to.Add(op.peer);
  return sameHost.size() * to.count();
}

}  // namespace tccl
