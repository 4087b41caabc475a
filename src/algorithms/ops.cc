// Builders for schedule ops, shared by every generator.
#include "algorithms/generators.h"

namespace tccl {

Op MakeSend(int peer, BufRef src, size_t n) {
  Op o;
  o.kind = OpKind::Send;
  o.peer = peer;
  o.src = src;
  o.count = n;
  return o;
}

Op MakeRecv(int peer, BufRef dst, size_t n) {
  Op o;
  o.kind = OpKind::Recv;
  o.peer = peer;
  o.dst = dst;
  o.count = n;
  return o;
}

Op MakeFinalRecv(int peer, BufRef dst, size_t n) {
  Op o = MakeRecv(peer, dst, n);
  o.finalDst = true;
  return o;
}

bool FinalReduceOutput(const CollArgs& a) { return a.op != tcclAvg && !a.inPlace; }

Op MakeRecvReduce(int peer, BufRef dst, BufRef local, size_t n) {
  Op o;
  o.kind = OpKind::RecvReduce;
  o.peer = peer;
  o.dst = dst;
  o.src = local;
  o.count = n;
  return o;
}

bool NothingToExchange(const CollArgs& a, Schedule* s) {
  if (a.count == 0) return true;
  if (a.nranks > 1) return false;
  if (!a.inPlace) s->steps.push_back({{MakeFinalCopy({kSendBuf, 0}, {kRecvBuf, 0}, a.count)}});
  return true;
}

Op MakeCopy(BufRef src, BufRef dst, size_t n) {
  Op o;
  o.kind = OpKind::Copy;
  o.src = src;
  o.dst = dst;
  o.count = n;
  return o;
}

Op MakeFinalCopy(BufRef src, BufRef dst, size_t n) {
  Op o = MakeCopy(src, dst, n);
  o.finalDst = true;
  return o;
}

Op MakeDivide(BufRef dst, size_t n) {
  Op o;
  o.kind = OpKind::Divide;
  o.dst = dst;
  o.count = n;
  return o;
}

Op MakeReduce(BufRef dst, BufRef x, BufRef y, size_t n) {
  Op o;
  o.kind = OpKind::Reduce;
  o.dst = dst;
  o.src = x;
  o.own = y;
  o.count = n;
  return o;
}

}  // namespace tccl
