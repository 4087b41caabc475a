#include "bootstrap/store_protocol.h"

#include <cstring>

namespace tccl {

HelloResult ParseStoreHello(const std::string& in, const uint8_t secret[16], int32_t* pid) {
  if (in.size() < sizeof(StoreHello)) return HelloResult::Incomplete;
  StoreHello h;
  memcpy(&h, in.data(), sizeof(h));
  if (h.magic != StoreHello::kMagic || memcmp(h.secret, secret, 16) != 0) return HelloResult::Invalid;
  *pid = h.pid;
  return HelloResult::Valid;
}

bool ParseStoreRequests(const std::string& in, size_t* pos, std::vector<StoreCommand>* out) {
  while (in.size() - *pos >= sizeof(StoreRequest)) {
    StoreRequest r;
    memcpy(&r, in.data() + *pos, sizeof(r));
    if (r.keyLen == 0 || r.keyLen > kStoreMaxKey || r.valLen > kStoreMaxValue ||
        (r.op != (uint32_t)StoreOp::Set && r.op != (uint32_t)StoreOp::Get) ||
        (r.op == (uint32_t)StoreOp::Get && r.valLen != 0))
      return false;
    size_t need = sizeof(r) + r.keyLen + r.valLen;
    if (in.size() - *pos < need) break;
    StoreCommand c;
    c.op = (StoreOp)r.op;
    c.key = in.substr(*pos + sizeof(r), r.keyLen);
    c.value = in.substr(*pos + sizeof(r) + r.keyLen, r.valLen);
    out->push_back(std::move(c));
    *pos += need;
  }
  return true;
}

}  // namespace tccl
