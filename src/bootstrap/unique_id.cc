#include "bootstrap/unique_id.h"

#include <sys/random.h>

#include <chrono>
#include <cstring>
#include <random>

namespace tccl {

void PackUniqueId(const UniqueIdData& d, tcclUniqueId* id) {
  memset(id->internal, 0, sizeof(id->internal));
  memcpy(id->internal, &d, sizeof(d));
}

Status UnpackUniqueId(const tcclUniqueId& id, UniqueIdData* d) {
  memcpy(d, id.internal, sizeof(*d));
  if (d->magic != UniqueIdData::kMagic || d->version != 1 || d->port == 0)
    return InvalidArgument(
        "the unique id is not one made by tcclGetUniqueId (bad magic, version or port); every rank "
        "must receive the id rank 0 created");
  return Status::Ok();
}

void RandomBytes(void* buf, size_t n) {
  char* p = static_cast<char*>(buf);
  while (n > 0) {
    ssize_t r = getrandom(p, n, 0);
    if (r <= 0) break;
    p += r;
    n -= (size_t)r;
  }
  if (n > 0) {  // getrandom unavailable: fall back to a time-seeded generator
    std::mt19937_64 g((uint64_t)std::chrono::high_resolution_clock::now().time_since_epoch().count());
    for (size_t i = 0; i < n; ++i) p[i] = (char)g();
  }
}

}  // namespace tccl
