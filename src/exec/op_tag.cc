#include "exec/op_tag.h"

#include "algorithms/registry.h"
#include "kernels/host/dtype.h"

namespace tccl {

namespace {

std::string KindName(uint8_t kind) {
  if (kind == OpTag::kP2P) return "send/recv";
  if (kind <= (uint8_t)CollKind::AllToAll) return CollName((CollKind)kind);
  return "unknown operation " + std::to_string(kind);
}

std::string AlgoName(uint8_t algo) {
  const auto& all = AllAlgorithms();
  return algo < all.size() ? all[algo].name : "algorithm " + std::to_string(algo);
}

std::string DtypeText(uint8_t dt) {
  return ValidDtype(dt) ? DtypeName((tcclDataType_t)dt) : "dtype " + std::to_string(dt);
}

std::string OpText(uint8_t op) {
  return ValidOp(op) ? OpName((tcclRedOp_t)op) : "op " + std::to_string(op);
}

}  // namespace

bool PlausibleTag(const OpTag& t) {
  const bool knownKind = t.kind == OpTag::kP2P || t.kind <= (uint8_t)CollKind::AllToAll;
  return knownKind && ValidDtype(t.dtype) && ValidOp(t.redop) && t.algo < AllAlgorithms().size() && t.bytes > 0;
}

std::string DescribeTag(const OpTag& t) {
  if (t.kind == OpTag::kP2P) return "send/recv of " + std::to_string(t.bytes) + " bytes";
  std::string s = KindName(t.kind) + " #" + std::to_string(t.seq) + " (" + std::to_string(t.count) + " x " +
                  DtypeText(t.dtype);
  const bool reduces = t.kind == (uint8_t)CollKind::AllReduce || t.kind == (uint8_t)CollKind::Reduce ||
                       t.kind == (uint8_t)CollKind::ReduceScatter;
  if (reduces) s += ", " + OpText(t.redop);
  if (t.kind == (uint8_t)CollKind::Broadcast || t.kind == (uint8_t)CollKind::Reduce)
    s += ", root " + std::to_string(t.root);
  return s + ", " + AlgoName(t.algo) + ")";
}

std::string CompareTags(const OpTag& got, const OpTag& want) {
  std::string diff;
  auto add = [&](const std::string& what) { diff += (diff.empty() ? "" : ", ") + what; };
  if (got.kind != want.kind) add("operation " + KindName(got.kind) + " instead of " + KindName(want.kind));
  if (got.seq != want.seq)
    add("sequence number " + std::to_string(got.seq) + " instead of " + std::to_string(want.seq));
  if (got.count != want.count)
    add("count " + std::to_string(got.count) + " instead of " + std::to_string(want.count));
  if (got.dtype != want.dtype) add("dtype " + DtypeText(got.dtype) + " instead of " + DtypeText(want.dtype));
  if (got.redop != want.redop) add("reduction " + OpText(got.redop) + " instead of " + OpText(want.redop));
  if (got.root != want.root)
    add("root " + std::to_string(got.root) + " instead of " + std::to_string(want.root));
  // Different operations have different algorithm tables; only the same operation's choice can differ.
  if (got.algo != want.algo && got.kind == want.kind)
    add("algorithm " + AlgoName(got.algo) + " instead of " + AlgoName(want.algo) +
        " (ranks chose differently: different TCCL_ALGO or determinism settings, or buffers from "
        "tcclMemAlloc on some ranks only, docs/single_copy.md)");
  if (diff.empty() && got.bytes != want.bytes)
    add("a message of " + std::to_string(got.bytes) + " bytes where " + std::to_string(want.bytes) +
        " were expected");
  return diff;
}

std::string DescribeMismatch(const OpTag& got, const OpTag& want, const std::string& peer) {
  if (!PlausibleTag(got))
    return "what " + peer +
           " sent does not begin with an operation tag, so it was framed for another call (another collective, or "
           "this one with another count, dtype or algorithm)";
  return peer + " is in " + DescribeTag(got) + ", with " + CompareTags(got, want);
}

}  // namespace tccl
