#include "comm/shared_scratch_copy.h"

#include "core/log.h"

namespace tccl {

void SharedScratchCopy::Copy(void* ctx, void* dst, const void* src, size_t n) {
  RingCopyIn& in = static_cast<SharedScratchCopy*>(ctx)->copyIn_;
  const bool streamed = in.streaming();
  in.Copy(dst, 0, n, src, n);  // the offset and capacity only matter to the measured rule
  if (in.streaming() != streamed)
    TCCL_INFO(kLogShm, "staging into shared scratch now %s (%s)", in.streaming() ? "streamed" : "through the cache",
              in.reason());
}

}  // namespace tccl
