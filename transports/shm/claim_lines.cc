#include "transports/shm/claim_lines.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace tccl {

bool CanClaimLines() {
#if defined(__x86_64__)
  static const bool can = [] {
    unsigned a, b, c, d;
    return __get_cpuid(0x80000001, &a, &b, &c, &d) && (c & bit_PRFCHW) != 0;
  }();
  return can;
#else
  return false;
#endif
}

}  // namespace tccl
